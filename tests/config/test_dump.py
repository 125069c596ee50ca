"""Dumping configs (.py / .json / .yaml), ``pretty_text`` and ``Config.diff``."""

from __future__ import annotations

import builtins
import collections
import json
import keyword
import math
import os.path
import sys

import pytest
import torch
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cadence.config import Config, ConfigError

RESERVED = {"filename", "text", "pretty_text", "env_variables", "custom_imports"}


def typed(value):
    """``value`` with every container and scalar tagged by its type (bool != int)."""
    if isinstance(value, dict):
        return ("dict", {k: typed(v) for k, v in dict.items(value)})
    if isinstance(value, list):
        return ("list", [typed(v) for v in value])
    if isinstance(value, tuple):
        return ("tuple", [typed(v) for v in value])
    return (type(value).__name__, value)


def tuples_to_lists(value):
    if isinstance(value, dict):
        return {k: tuples_to_lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [tuples_to_lists(v) for v in value]
    return value


# ---------------------------------------------------------------- strategies
keys = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,7}", fullmatch=True).filter(
    lambda k: not keyword.iskeyword(k) and not hasattr(builtins, k) and k not in RESERVED
)
scalars = (
    st.integers()
    | st.floats(allow_nan=False, allow_infinity=True)
    | st.booleans()
    | st.none()
    | st.text(st.characters(exclude_categories=("Cs",)), max_size=12).filter(
        lambda s: "{{" not in s
    )
)
values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.lists(children, max_size=4).map(tuple)
        | st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=12,
)
configs = st.dictionaries(keys, values, max_size=5)

PROPERTY = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@pytest.fixture(scope="module")
def dump_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("dumps")


@PROPERTY
@given(data=configs)
def test_property_python_dump_loads_back_equal(dump_dir, data):
    path = dump_dir / "prop.py"
    Config(data).dump(path)
    loaded = Config.fromfile(path)
    assert typed(loaded.to_dict()) == typed(data)


@PROPERTY
@given(data=configs)
def test_property_json_dump_loads_back_with_lists(dump_dir, data):
    path = dump_dir / "prop.json"
    Config(data).dump(path)
    loaded = Config.fromfile(path)
    assert typed(loaded.to_dict()) == typed(tuples_to_lists(data))


@PROPERTY
@given(data=configs)
def test_property_yaml_dump_keeps_tuples(dump_dir, data):
    path = dump_dir / "prop.yaml"
    Config(data).dump(path)
    loaded = Config.fromfile(path)
    assert typed(loaded.to_dict()) == typed(data)


# ------------------------------------------------------------ fixed examples
SAMPLE = {
    "model": {"type": "M", "depth": 50, "sizes": (224, 224), "ratios": [0.5, 1.0, 2.0]},
    "pipeline": [{"type": "Load"}, {"type": "Resize", "keep": True, "pad": None}],
    "lr": 0.01,
    "max_norm": float("inf"),
    "low": float("-inf"),
    "name": 'it\'s "quoted"\nwith newline',
    "empty": {},
    "empty_list": [],
    "single": (1,),
    "non_identifier_keys": {"1x": 1, "a-b": 2, "class": 3},
    "yaml_line_breaks": "a\x85b\u2028c\u2029",  # YAML folds these unless double-quoted
}


@pytest.mark.parametrize("suffix", [".py", ".json", ".yaml", ".yml"])
def test_dump_round_trip_each_format(tmp_path, suffix):
    path = tmp_path / f"out{suffix}"
    Config(SAMPLE).dump(path)
    loaded = Config.fromfile(path).to_dict()
    expected = tuples_to_lists(SAMPLE) if suffix == ".json" else SAMPLE
    assert typed(loaded) == typed(expected)


def test_dump_loaded_file_round_trip(write_files, tmp_path):
    root = write_files(
        {
            "base.py": "model = dict(type='M', backbone=dict(depth=50))\nlr = 0.1\n",
            "child.py": "_base_ = './base.py'\nmodel = dict(backbone=dict(depth=18))\n",
        }
    )
    cfg = Config.fromfile(root / "child.py")
    cfg.dump(tmp_path / "out" / "dumped.py")
    assert Config.fromfile(tmp_path / "out" / "dumped.py") == cfg


def test_dump_leaves_no_temporary_files(tmp_path):
    Config(SAMPLE).dump(tmp_path / "out.py")
    Config(SAMPLE).dump(tmp_path / "out.py")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.py"]


def test_dump_of_classes_and_functions_as_imports(tmp_path):
    data = {
        "model": {
            "type": torch.nn.Linear,
            "act": torch.nn.functional.relu,
            "container": collections.OrderedDict,
            "join": os.path.join,
            "floor": math.floor,
        },
        "optimizers": [torch.optim.SGD, torch.optim.Adam],
        "schedulers": (torch.optim.lr_scheduler.MultiStepLR,),
    }
    cfg = Config(data)
    cfg.dump(tmp_path / "objs.py")
    text = (tmp_path / "objs.py").read_text()
    assert "import" in text
    loaded = Config.fromfile(tmp_path / "objs.py")
    assert loaded.model.type is torch.nn.Linear
    assert loaded.model.act is torch.nn.functional.relu
    assert loaded.model.container is collections.OrderedDict
    assert loaded.model.join is os.path.join
    assert loaded.model.floor is math.floor
    assert [loaded.optimizers[0], loaded.optimizers[1]] == [torch.optim.SGD, torch.optim.Adam]
    assert loaded.schedulers[0] == torch.optim.lr_scheduler.MultiStepLR
    assert loaded == cfg


def test_dump_name_clash_between_import_and_key(tmp_path):
    cfg = Config({"SGD": 1, "optim": {"type": torch.optim.SGD}})
    cfg.dump(tmp_path / "clash.py")
    loaded = Config.fromfile(tmp_path / "clash.py")
    assert loaded.SGD == 1
    assert loaded.optim.type is torch.optim.SGD


@pytest.mark.parametrize("key", ["dict", "float"])
def test_dump_with_keys_named_like_builtins(tmp_path, key):
    data = {key: 1, "nested": {"a": [1, (2, 3)]}, "inf": float("inf")}
    Config(data).dump(tmp_path / "builtins.py")
    loaded = Config.fromfile(tmp_path / "builtins.py")
    assert typed(loaded.to_dict()) == typed(data)


def test_dump_of_pure_config_keeps_imports_lazy(write_files, spy_module, tmp_path):
    spy_module("cadence_spy_dump", "class Thing:\n    pass\n")
    root = write_files(
        {
            "cfg.py": "from cadence_spy_dump import Thing\nfrom torch.optim import SGD\n"
            "model = dict(type=Thing, depth=2)\noptim = dict(type=SGD)\n",
        }
    )
    cfg = Config.fromfile(root / "cfg.py")
    cfg.dump(tmp_path / "dumped.py")
    assert "cadence_spy_dump" not in sys.modules
    loaded = Config.fromfile(tmp_path / "dumped.py")
    assert "cadence_spy_dump" not in sys.modules
    assert loaded.to_dict() == {
        "model": {"type": "cadence_spy_dump.Thing", "depth": 2},
        "optim": {"type": "torch.optim.SGD"},
    }
    assert loaded.optim.type is torch.optim.SGD
    assert loaded.model.type is sys.modules["cadence_spy_dump"].Thing


def test_dump_unknown_suffix_is_an_error(tmp_path):
    with pytest.raises(ConfigError, match=r"\.toml"):
        Config({"a": 1}).dump(tmp_path / "cfg.toml")
    assert not (tmp_path / "cfg.toml").exists()


def test_dump_object_that_cannot_be_written(tmp_path):
    with pytest.raises(ConfigError) as info:
        Config({"a": {"b": object()}}).dump(tmp_path / "bad.py")
    assert "a.b" in str(info.value)


# ------------------------------------------------------- dump() without path
def test_dump_without_path_uses_the_loaded_format(write_files):
    root = write_files(
        {
            "cfg.py": "a = dict(b=[1, 2], t=(3, 4))\n",
            "cfg.json": '{"a": {"b": [1, 2]}}',
            "cfg.yaml": "a:\n  b: [1, 2]\n",
            "cfg.yml": "a:\n  b: [1, 2]\n",
        }
    )
    py = Config.fromfile(root / "cfg.py")
    assert Config.fromstring(py.dump(), ".py") == py
    assert json.loads(Config.fromfile(root / "cfg.json").dump()) == {"a": {"b": [1, 2]}}
    for name in ("cfg.yaml", "cfg.yml"):
        text = Config.fromfile(root / name).dump()
        assert yaml.safe_load(text) == {"a": {"b": [1, 2]}}
        with pytest.raises(json.JSONDecodeError):
            json.loads(text)


def test_dump_without_path_and_without_file_gives_python():
    for cfg in (Config({"x": (1, 2)}), Config.fromstring("x = (1, 2)\n", ".py")):
        text = cfg.dump()
        assert text == cfg.pretty_text
        assert Config.fromstring(text, ".py").x == (1, 2)


# ---------------------------------------------------------------- pretty_text
def test_pretty_text_loads_back_equal():
    cfg = Config(SAMPLE)
    assert typed(Config.fromstring(cfg.pretty_text, ".py").to_dict()) == typed(SAMPLE)


def test_pretty_text_is_formatted():
    cfg = Config(
        {
            "model": {f"option_number_{i}": f"a fairly long string value {i}" for i in range(8)},
            "short": 1,
        }
    )
    text = cfg.pretty_text
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 100
    assert len(lines) > 2  # the long dict was split over several lines
    assert "short = 1" in lines
    assert Config.fromstring(text, ".py") == cfg


def test_pretty_text_layout_splits_only_what_does_not_fit():
    cfg = Config(
        dict(
            short=dict(type="A", x=(1,)),
            model=dict(type="Net", layers=[dict(type="Conv", channels=c) for c in (16, 32, 64)],
                       head=dict(type="Head", num_classes=10, loss=dict(type="CE", w=1.0))),
            single=("a" * 95,),
        )
    )  # fmt: skip
    assert cfg.pretty_text == (
        "short = dict(type='A', x=(1,))\n"
        "model = dict(\n"
        "    type='Net',\n"
        "    layers=[\n"
        "        dict(type='Conv', channels=16),\n"
        "        dict(type='Conv', channels=32),\n"
        "        dict(type='Conv', channels=64),\n"
        "    ],\n"
        "    head=dict(type='Head', num_classes=10, loss=dict(type='CE', w=1.0)),\n"
        ")\n"
        "single = (\n"
        f"    '{'a' * 95}',\n"
        ")\n"
    )


@PROPERTY
@given(cfg=configs)
def test_property_pretty_text_split_everywhere_loads_back_equal(cfg):
    """With a 1-column limit every container is split, one item per line."""
    from cadence.config import dump

    old, dump.COLUMNS = dump.COLUMNS, 1
    try:
        text = Config(cfg).pretty_text
    finally:
        dump.COLUMNS = old
    assert typed(Config.fromstring(text, ".py").to_dict()) == typed(cfg)


# ----------------------------------------------------------------------- diff
def test_diff_of_equal_configs_is_empty(write_files):
    root = write_files({"a.py": "x = dict(y=1)\n", "b.py": "x = dict(y=1)\n"})
    assert Config.diff(Config.fromfile(root / "a.py"), Config.fromfile(root / "b.py")) == ""
    assert Config.diff(str(root / "a.py"), str(root / "b.py")) == ""


def test_diff_mentions_changed_keys(write_files):
    root = write_files(
        {
            "a.py": "model = dict(depth=50)\nlr = 0.1\nsame = 'unchanged'\n",
            "b.py": "model = dict(depth=101)\nlr = 0.1\nsame = 'unchanged'\nnew_key = 3\n",
        }
    )
    diff = Config.diff(Config.fromfile(root / "a.py"), Config.fromfile(root / "b.py"))
    lines = diff.splitlines()
    removed = [x for x in lines if x.startswith("-") and not x.startswith("---")]
    added = [x for x in lines if x.startswith("+") and not x.startswith("+++")]
    assert any("model" in line and "50" in line for line in removed)
    assert any("model" in line and "101" in line for line in added)
    assert any("new_key" in line for line in added)
    assert not any("same" in line or "lr" in line for line in removed + added)
    assert Config.diff(str(root / "a.py"), str(root / "b.py")) == diff
