"""Config.auto_argparser / add_args and the class-wide ConfigDict.lazy switch."""

from __future__ import annotations

import sys
from argparse import ArgumentParser

import pytest

from cadence.config import Config, ConfigDict, LazyObject
from cadence.config.auto_args import add_args


def test_add_args_makes_one_option_per_leaf():
    cfg = {"lr": 0.1, "epochs": 3, "name": "run", "amp": False, "sizes": [1, 2],
           "model": {"depth": 4, "head": {"kind": "fc"}}}  # fmt: skip
    parser = add_args(ArgumentParser(), cfg)
    args = parser.parse_args(["--lr", "0.5", "--epochs", "7", "--amp", "--sizes", "3", "4", "5",
                              "--model.depth", "18", "--model.head.kind", "conv"])  # fmt: skip
    assert vars(args) == {"lr": 0.5, "epochs": 7, "name": None, "amp": True, "sizes": [3, 4, 5],
                          "model.depth": 18, "model.head.kind": "conv"}  # fmt: skip
    with pytest.raises(SystemExit):
        parser.parse_args(["--epochs", "many"])  # typed from the config's value


def test_add_args_warns_for_leaves_it_cannot_type():
    with pytest.warns(UserWarning, match="cannot parse key opt.missing of type NoneType"):
        parser = add_args(ArgumentParser(), {"opt": {"missing": None}, "ok": 1})
    assert parser.parse_args([]).ok is None


def test_auto_argparser_reads_the_config_named_on_the_command_line(tmp_path, monkeypatch):
    path = tmp_path / "cfg.py"
    path.write_text("model = dict(type='Net', depth=3)\nlr = 0.01\n")
    monkeypatch.setattr(sys, "argv", ["train.py", str(path), "--model.depth", "5"])
    parser, cfg = Config.auto_argparser("Train a model")
    assert isinstance(cfg, Config) and cfg.model.depth == 3
    args = parser.parse_args()
    assert args.config == str(path)
    assert getattr(args, "model.depth") == 5 and args.lr is None
    assert parser.description == "Train a model"


def test_config_dict_lazy_returns_lazy_objects_unresolved():
    cfg = ConfigDict(
        dtype=LazyObject("collections.OrderedDict"), nested={"f": LazyObject("json.dumps")}
    )
    import collections
    import json

    assert cfg.dtype is collections.OrderedDict and cfg.nested["f"] is json.dumps
    ConfigDict.lazy = True
    try:
        assert isinstance(cfg.dtype, LazyObject) and isinstance(cfg["nested"].f, LazyObject)
        assert all(isinstance(v, LazyObject) for k, v in cfg.items() if k == "dtype")
    finally:
        ConfigDict.lazy = False
    assert cfg.get("dtype") is collections.OrderedDict
    with pytest.raises(AttributeError, match="class setting"):
        cfg.lazy = True  # a class-wide switch, as in mmengine, not a per-instance key
