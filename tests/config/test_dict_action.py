"""``--cfg-options``: ``DictAction``, ``parse_options`` and ``Config.merge_from_dict``."""

from __future__ import annotations

import argparse

import pytest

from cadence.config import (
    Config,
    ConfigError,
    ConfigKeyError,
    DictAction,
    parse_options,
)


def make_parser():
    parser = argparse.ArgumentParser(prog="prog")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, default={})
    return parser


# ---------------------------------------------------------------- DictAction
def test_dict_action_parses_every_value_kind():
    args = make_parser().parse_args(
        [
            "--cfg-options",
            "a.b=1",
            "c=[1,2]",
            'd="(1,2)"',
            "e=None",
            "f=true",
            "g=1.5",
            "h=[(1,2),(3,4)]",
            "i=a,b",
            "j=False",
            "k=text",
            "l=[]",
            "m=[[1,2],[3]]",
            "n=[a,(b,c)]",
        ]
    )
    expected = {
        "a.b": 1,
        "c": [1, 2],
        "d": (1, 2),
        "e": None,
        "f": True,
        "g": 1.5,
        "h": [(1, 2), (3, 4)],
        "i": ["a", "b"],
        "j": False,
        "k": "text",
        "l": [],
        "m": [[1, 2], [3]],
        "n": ["a", ("b", "c")],
    }
    assert args.cfg_options == expected
    for key, value in expected.items():
        assert type(args.cfg_options[key]) is type(value), key


def test_dict_action_quoted_value_with_spaces():
    args = make_parser().parse_args(["--cfg-options", "size=(224, 224)", "s='x'"])
    assert args.cfg_options == {"size": (224, 224), "s": "x"}


def test_dict_action_repeated_option_accumulates():
    args = make_parser().parse_args(["--cfg-options", "a=1", "--cfg-options", "b=2", "a=3"])
    assert args.cfg_options == {"a": 3, "b": 2}


def test_dict_action_default_when_absent():
    assert make_parser().parse_args([]).cfg_options == {}


@pytest.mark.parametrize("bad", ["no_equals_sign", "=1"])
def test_dict_action_bad_entry_is_an_argparse_error(capsys, bad):
    with pytest.raises(SystemExit) as info:
        make_parser().parse_args(["--cfg-options", "a=1", bad])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "prog: error:" in err
    assert bad in err


def test_dict_action_unbalanced_brackets_is_an_argparse_error(capsys):
    with pytest.raises(SystemExit) as info:
        make_parser().parse_args(["--cfg-options", "a=[1,(2]"])
    assert info.value.code == 2
    assert "'a'" in capsys.readouterr().err


# ------------------------------------------------------------- parse_options
def test_parse_options():
    assert parse_options(["x.y=2", "z=[1,(2,3)]"]) == {"x.y": 2, "z": [1, (2, 3)]}


@pytest.mark.parametrize("bad", ["novalue", "=5"])
def test_parse_options_bad_entry_raises_config_error(bad):
    with pytest.raises(ConfigError) as info:
        parse_options(["ok=1", bad])
    assert repr(bad) in str(info.value)
    assert "--cfg-options" in str(info.value)


# ------------------------------------------------------------ merge_from_dict
def sample():
    return Config(
        dict(
            model=dict(type="M", backbone=dict(depth=50, frozen=-1)),
            pipeline=[dict(type="Load"), dict(type="Resize", scale=(1, 2))],
            lr=0.1,
        )
    )


def test_merge_from_dict_nested_keys():
    cfg = sample()
    cfg.merge_from_dict({"model.backbone.depth": 101, "lr": 0.2, "new.key": "v"})
    assert cfg.to_dict() == {
        "model": {"type": "M", "backbone": {"depth": 101, "frozen": -1}},
        "pipeline": [{"type": "Load"}, {"type": "Resize", "scale": (1, 2)}],
        "lr": 0.2,
        "new": {"key": "v"},
    }


def test_merge_from_dict_list_index():
    cfg = sample()
    cfg.merge_from_dict({"pipeline.0.type": "X", "pipeline.1.scale": (3, 4)})
    assert cfg.to_dict()["pipeline"] == [{"type": "X"}, {"type": "Resize", "scale": (3, 4)}]
    assert cfg.pipeline[1].type == "Resize"


def test_merge_from_dict_whole_list_element():
    cfg = sample()
    cfg.merge_from_dict({"pipeline.1": dict(type="Pad")})
    assert cfg.to_dict()["pipeline"] == [{"type": "Load"}, {"type": "Pad", "scale": (1, 2)}]


def test_merge_from_dict_dict_value_merges():
    cfg = sample()
    cfg.merge_from_dict({"model": dict(backbone=dict(depth=18))})
    assert cfg.to_dict()["model"] == {"type": "M", "backbone": {"depth": 18, "frozen": -1}}


def test_merge_from_dict_list_keys_disallowed():
    cfg = sample()
    with pytest.raises(ConfigError) as info:
        cfg.merge_from_dict({"pipeline.0.type": "X"}, allow_list_keys=False)
    assert "pipeline" in str(info.value)
    assert cfg.pipeline[0].type == "Load"


def test_merge_from_dict_index_out_of_range():
    cfg = sample()
    with pytest.raises(ConfigKeyError) as info:
        cfg.merge_from_dict({"pipeline.2.type": "X"})
    assert isinstance(info.value, KeyError)
    assert "pipeline.2" in str(info.value)
    assert cfg.to_dict() == sample().to_dict()


def test_merge_from_dict_on_loaded_config_then_cli_values(write_files):
    root = write_files({"cfg.py": "optim_wrapper = dict(optimizer=dict(type='SGD', lr=0.1))\n"})
    cfg = Config.fromfile(root / "cfg.py")
    args = make_parser().parse_args(
        ["--cfg-options", "optim_wrapper.optimizer.lr=0.01", "optim_wrapper.clip=None"]
    )
    cfg.merge_from_dict(args.cfg_options)
    assert cfg.to_dict() == {
        "optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.01}, "clip": None}
    }


@pytest.mark.parametrize("key", ["", "a..b", ".a", "a."])
def test_merge_from_dict_bad_key(key):
    with pytest.raises(ConfigKeyError):
        sample().merge_from_dict({key: 1})


def test_a_call_in_a_value_is_an_error_naming_the_key_not_a_recursion():
    from cadence.config import ConfigError
    from cadence.config.dict_action import parse_options

    with pytest.raises(ConfigError, match="cannot parse the --cfg-options value") as info:
        parse_options(["custom_hooks=[dict(type='EMAHook',momentum=0.1)]"])
    assert "custom_hooks.0.name=value" in str(info.value)


def test_dict_action_list_of_one_tuple():
    # mmdet's train_cfg.dynamic_intervals: a list holding one (epoch, interval) pair
    from cadence.config.dict_action import parse_value

    assert parse_value("[(1,1)]") == [(1, 1)]
    assert parse_value("[[1,2]]") == [[1, 2]]
