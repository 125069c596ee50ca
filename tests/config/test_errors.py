"""Errors name the file, the line where known, and the key."""

from __future__ import annotations

import pytest

from cadence.config import (
    Config,
    ConfigError,
    ConfigFileNotFoundError,
    ConfigKeyError,
    ConfigSyntaxError,
    parse_options,
)


def error_of(path, **kwargs):
    with pytest.raises(ConfigError) as info:
        Config.fromfile(path, **kwargs)
    return info.value


def test_python_syntax_error(write_files):
    root = write_files({"cfg.py": "a = 1\nb = dict(\nc = 3\n"})
    exc = error_of(root / "cfg.py")
    assert isinstance(exc, ConfigSyntaxError) and isinstance(exc, SyntaxError)
    assert f"{root / 'cfg.py'}:2" in str(exc)


def test_syntax_error_in_a_base(write_files):
    root = write_files({"base.py": "a = 1\nb = = 2\n", "child.py": "_base_ = './base.py'\n"})
    exc = error_of(root / "child.py")
    assert isinstance(exc, SyntaxError)
    assert f"{root / 'base.py'}:2" in str(exc)


def test_pure_python_syntax_error(write_files):
    root = write_files(
        {
            "base.py": "a = 1\n",
            "cfg.py": "from cadence.config import read_base\nwith read_base():\n"
            "    from .base import *\nx = (1,\n",
        }
    )
    exc = error_of(root / "cfg.py")
    assert isinstance(exc, SyntaxError)
    assert str(root / "cfg.py") in str(exc)


def test_json_syntax_error(write_files):
    root = write_files({"cfg.json": '{\n  "a": 1,\n  "b": \n}\n'})
    exc = error_of(root / "cfg.json")
    assert isinstance(exc, SyntaxError)
    assert f"{root / 'cfg.json'}:4" in str(exc)


def test_yaml_syntax_error(write_files):
    root = write_files({"cfg.yaml": "a: 1\nb: [1, 2\nc: 3\n"})
    exc = error_of(root / "cfg.yaml")
    assert isinstance(exc, SyntaxError)
    assert str(root / "cfg.yaml") in str(exc)
    assert exc.line is not None


def test_missing_config_file(tmp_path):
    exc = error_of(tmp_path / "missing.py")
    assert isinstance(exc, ConfigFileNotFoundError) and isinstance(exc, FileNotFoundError)
    assert "missing.py" in str(exc)


def test_missing_base_file(write_files):
    root = write_files({"child.py": "a = 1\n_base_ = ['./nothere.py']\n"})
    exc = error_of(root / "child.py")
    assert isinstance(exc, FileNotFoundError)
    message = str(exc)
    assert f"{root / 'child.py'}:2" in message
    assert "nothere.py" in message


def test_missing_pure_python_base(write_files):
    root = write_files(
        {
            "child.py": "from cadence.config import read_base\nwith read_base():\n"
            "    from .nothere import *\n"
        }
    )
    exc = error_of(root / "child.py")
    assert isinstance(exc, FileNotFoundError)
    assert f"{root / 'child.py'}:3" in str(exc)
    assert "nothere" in str(exc).replace(str(root / "child.py"), "")


def test_bad_base_reference_with_suggestion(write_files):
    root = write_files(
        {
            "base.py": "model = dict(backbone=dict(depth=50))\n",
            "child.py": "_base_ = './base.py'\nx = 1\ny = {{_base_.model.backbne.depth}}\n",
        }
    )
    exc = error_of(root / "child.py")
    assert isinstance(exc, ConfigKeyError) and isinstance(exc, KeyError)
    message = str(exc)
    assert f"{root / 'child.py'}:3" in message
    assert "model.backbne.depth" in message
    assert "Did you mean 'backbone'" in message


def test_bad_base_reference_to_missing_top_level_key(write_files):
    root = write_files(
        {
            "base.py": "learning_rate = 0.1\n",
            "child.py": "_base_ = './base.py'\nlr = '{{_base_.learning_rat}}'\n",
        }
    )
    message = str(error_of(root / "child.py"))
    assert f"{root / 'child.py'}:2" in message
    assert "learning_rat" in message
    assert "Did you mean 'learning_rate'" in message


def test_cycle_in_bases(write_files):
    root = write_files(
        {
            "a.py": "_base_ = './b.py'\nx = 1\n",
            "b.py": "_base_ = './c.py'\n",
            "c.py": "y = 2\n_base_ = './a.py'\n",
        }
    )
    exc = error_of(root / "a.py")
    message = str(exc)
    assert "cycle" in message.replace(str(root), "")
    for name in ("a.py", "b.py", "c.py"):
        assert str(root / name) in message
    assert f"{root / 'c.py'}:2" in message


def test_self_inheritance_is_a_cycle(write_files):
    root = write_files({"a.py": "_base_ = './a.py'\n"})
    assert "cycle" in str(error_of(root / "a.py")).replace(str(root), "")


def test_cycle_in_pure_python_bases(write_files):
    root = write_files(
        {
            "a.py": "from cadence.config import read_base\nwith read_base():\n"
            "    from .b import *\n",
            "b.py": "from cadence.config import read_base\nwith read_base():\n"
            "    from .a import *\n",
        }
    )
    message = str(error_of(root / "a.py"))
    assert "cycle" in message.replace(str(root), "")
    assert str(root / "b.py") in message


@pytest.mark.parametrize(
    "source, line, pieces",
    [
        ("lr = 0.1\nx = 1\nb = lrr * 2\n", 3, ["NameError", "lrr", "Did you mean 'lr'"]),
        ("a = 1\n\nb = a / 0\n", 3, ["ZeroDivisionError"]),
        ("a = dict(x=1)\nb = a['y']\n", 2, ["KeyError", "'y'"]),
        ("def f():\n    raise ValueError('boom')\n\nx = 1\nv = f()\n", 2, ["ValueError", "boom"]),
    ],
    ids=["name", "zero", "key", "in-function"],
)
def test_exception_while_running_the_config(write_files, source, line, pieces):
    root = write_files({"cfg.py": source})
    exc = error_of(root / "cfg.py")
    message = str(exc)
    assert f"{root / 'cfg.py'}:{line}" in message
    for piece in pieces:
        assert piece in message
    assert exc.__cause__ is not None


def test_exception_in_a_base_names_the_base(write_files):
    root = write_files(
        {"base.py": "a = 1\nb = undefined_name\n", "child.py": "_base_ = './base.py'\nc = 2\n"}
    )
    message = str(error_of(root / "child.py"))
    assert f"{root / 'base.py'}:2" in message
    assert "undefined_name" in message


def test_exception_in_pure_python_config(write_files):
    root = write_files(
        {
            "base.py": "a = 1\n",
            "cfg.py": "from cadence.config import read_base\nwith read_base():\n"
            "    from .base import *\nb = a\nc = missing_thing\n",
        }
    )
    message = str(error_of(root / "cfg.py"))
    assert f"{root / 'cfg.py'}:5" in message
    assert "missing_thing" in message


def test_bad_cfg_options_entry():
    with pytest.raises(ConfigError) as info:
        parse_options(["model.depth=50", "model.frozen"])
    message = str(info.value)
    assert "--cfg-options" in message
    assert "model.frozen" in message


def test_bad_cfg_options_key_in_merge(write_files):
    root = write_files({"cfg.py": "pipeline = [dict(type='Load')]\n"})
    cfg = Config.fromfile(root / "cfg.py")
    with pytest.raises(ConfigKeyError) as info:
        cfg.merge_from_dict({"pipeline.3.type": "X"})
    message = str(info.value)
    assert "--cfg-options" in message
    assert "pipeline.3" in message


def test_config_error_str_pieces():
    message = str(ConfigError("went wrong", filename="cfg.py", line=4, key="model.depth"))
    for piece in ("cfg.py:4", "model.depth", "went wrong"):
        assert piece in message
    assert str(ConfigError("plain")) == "plain"
    keyed = str(ConfigKeyError("missing", key="a.b"))
    assert "a.b" in keyed and "missing" in keyed
