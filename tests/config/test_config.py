"""``Config``: loading each file format, access, copying, pickling, text, reserved keys."""

from __future__ import annotations

import copy
import pickle
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

from cadence.config import (
    Config,
    ConfigDict,
    ConfigError,
    ConfigImportError,
    ConfigKeyError,
)

EXPECTED = {
    "model": {"type": "ResNet", "depth": 50, "out_indices": [1, 2]},
    "lr": 0.01,
    "name": "exp",
    "flag": True,
    "nothing": None,
}

SOURCES = {
    ".py": """
        model = dict(type='ResNet', depth=50, out_indices=[1, 2])
        lr = 0.01
        name = 'exp'
        flag = True
        nothing = None
        """,
    ".json": """
        {"model": {"type": "ResNet", "depth": 50, "out_indices": [1, 2]},
         "lr": 0.01, "name": "exp", "flag": true, "nothing": null}
        """,
    ".yaml": """
        model:
          type: ResNet
          depth: 50
          out_indices: [1, 2]
        lr: 0.01
        name: exp
        flag: true
        nothing: null
        """,
}
SOURCES[".yml"] = SOURCES[".yaml"]


# ------------------------------------------------------------------ loading
@pytest.mark.parametrize("suffix", [".py", ".json", ".yaml", ".yml"])
def test_fromfile_each_format(write_files, suffix):
    root = write_files({f"cfg{suffix}": SOURCES[suffix]})
    cfg = Config.fromfile(str(root / f"cfg{suffix}"))
    assert cfg.to_dict() == EXPECTED
    assert isinstance(cfg.model, ConfigDict)
    assert cfg.model.out_indices == [1, 2]


def test_fromfile_accepts_pathlike(write_files):
    root = write_files({"cfg.py": SOURCES[".py"]})
    assert Config.fromfile(root / "cfg.py").to_dict() == EXPECTED


@pytest.mark.parametrize("file_format", [".py", ".json", ".yaml", "py"])
def test_fromstring(file_format):
    suffix = file_format if file_format.startswith(".") else "." + file_format
    cfg = Config.fromstring(textwrap.dedent(SOURCES[suffix]), file_format)
    assert cfg.to_dict() == EXPECTED
    assert cfg.filename is None


def test_fromstring_resolves_relative_base_against_cwd(write_files, monkeypatch):
    root = write_files({"sub/base.py": "a = 1\nb = dict(c=2)\n"})
    monkeypatch.chdir(root)
    cfg = Config.fromstring("_base_ = './sub/base.py'\nb = dict(d=3)\n", ".py")
    assert cfg.to_dict() == {"a": 1, "b": {"c": 2, "d": 3}}


def test_config_from_dict():
    cfg = Config(dict(a=1, b=dict(c=[dict(d=2)])))
    assert cfg.a == 1
    assert cfg["b"]["c"][0].d == 2
    assert isinstance(cfg.b, ConfigDict)
    assert isinstance(cfg.b.c[0], ConfigDict)
    assert cfg.filename is None
    assert len(Config()) == 0
    assert Config().to_dict() == {}


def test_config_rejects_non_mapping():
    with pytest.raises(TypeError):
        Config([("a", 1)])


# ------------------------------------------------------------------- access
def test_attribute_and_item_access_and_assignment():
    cfg = Config(dict(model=dict(backbone=dict(depth=50))))
    assert cfg.model.backbone.depth == cfg["model"]["backbone"]["depth"] == 50
    cfg.model.backbone.depth = 101
    assert cfg["model"]["backbone"]["depth"] == 101
    cfg.extra = dict(x=dict(y=1))
    cfg["other"] = [dict(z=2)]
    assert isinstance(cfg.extra.x, ConfigDict) and cfg.extra.x.y == 1
    assert isinstance(cfg.other[0], ConfigDict) and cfg.other[0].z == 2
    assert "extra" in cfg and set(cfg) == {"model", "extra", "other"}
    del cfg.extra
    del cfg["other"]
    assert set(cfg) == {"model"}


def test_missing_attribute_raises_with_suggestion_and_creates_nothing():
    cfg = Config(dict(model=dict(type="M", backbone=dict(depth=50))))
    with pytest.raises(AttributeError, match="Did you mean 'model'"):
        cfg.modle  # noqa: B018
    with pytest.raises(AttributeError, match="Did you mean 'backbone'"):
        cfg.model.backbon  # noqa: B018
    assert "modle" not in cfg
    assert "backbon" not in cfg.model
    assert not hasattr(cfg.model, "neck")
    assert cfg.to_dict() == {"model": {"type": "M", "backbone": {"depth": 50}}}


def test_missing_item_raises_key_error_with_suggestion():
    cfg = Config(dict(model=dict(type="M")))
    with pytest.raises(KeyError, match="Did you mean 'model'"):
        cfg["modle"]
    with pytest.raises(KeyError, match="Did you mean 'type'"):
        cfg["model"]["typ"]
    assert "typ" not in cfg.model


def test_missing_nested_assignment_does_not_autocreate():
    cfg = Config(dict(a=1))
    with pytest.raises(AttributeError):
        cfg.b.c = 1
    assert "b" not in cfg


def test_to_dict_gives_plain_containers(write_files):
    root = write_files({"cfg.py": "a = dict(b=[dict(c=1)], t=(dict(d=2),))\n"})
    data = Config.fromfile(root / "cfg.py").to_dict()
    assert data == {"a": {"b": [{"c": 1}], "t": ({"d": 2},)}}
    assert type(data) is dict
    assert type(data["a"]) is dict
    assert type(data["a"]["b"][0]) is dict
    assert type(data["a"]["t"]) is tuple
    assert type(data["a"]["t"][0]) is dict


# ---------------------------------------------------------- copy and pickle
@pytest.fixture
def chained(write_files):
    root = write_files(
        {
            "base.py": "model = dict(type='M', backbone=dict(depth=50))\nlr = 0.1\n",
            "child.py": "_base_ = './base.py'\nmodel = dict(backbone=dict(depth=101))\n",
        }
    )
    return Config.fromfile(root / "child.py")


def test_shallow_copy_keeps_everything(chained):
    for other in (copy.copy(chained), chained.copy()):
        assert other == chained
        assert other.filename == chained.filename
        assert other.text == chained.text
        assert other.provenance() == chained.provenance()


def test_deepcopy_is_independent(chained):
    other = copy.deepcopy(chained)
    assert other == chained
    assert other.filename == chained.filename
    assert other.text == chained.text
    other.model.backbone.depth = 18
    other.model.new = 1
    assert chained.model.backbone.depth == 101
    assert "new" not in chained.model
    assert other.model.backbone.__dict__["_cadence_key_path"] == "model.backbone"
    assert other.provenance("model.backbone.depth") == chained.provenance("model.backbone.depth")


def test_pickle_round_trip(chained):
    other = pickle.loads(pickle.dumps(chained))
    assert other == chained
    assert other.to_dict() == chained.to_dict()
    assert other.filename == chained.filename
    assert other.text == chained.text
    assert other.env_variables == chained.env_variables
    assert isinstance(other.model.backbone, ConfigDict)
    assert other.provenance() == chained.provenance()


def test_pickle_keeps_node_key_paths(chained):
    # configs are pickled into spawned workers; registry errors there still
    # need to name the config key of the node being built
    other = pickle.loads(pickle.dumps(chained))
    assert other.model.backbone.__dict__.get("_cadence_key_path") == "model.backbone"


# ------------------------------------------------------- filename and text
def test_filename_is_the_path_given(write_files):
    root = write_files({"cfg.py": "a = 1\n"})
    assert Config.fromfile(str(root / "cfg.py")).filename == str(root / "cfg.py")
    assert Config(dict(a=1)).filename is None


def test_text_has_every_file_with_its_path_bases_first(write_files):
    sources = {
        "a.py": "a = 1\n",
        "b.py": "_base_ = './a.py'\nb = 2\n",
        "other.py": "o = 3\n",
        "c.py": "_base_ = ['./b.py', './other.py']\nc = 4\n",
    }
    root = write_files(sources)
    text = Config.fromfile(root / "c.py").text
    positions = []
    for name in ("a.py", "b.py", "other.py", "c.py"):
        block = f"{root / name}\n{sources[name]}"
        assert block in text
        positions.append(text.index(block))
    assert positions == sorted(positions)


def test_text_of_pure_python_config(write_files):
    sources = {
        "base.py": "a = 1\n",
        "child.py": "from cadence.config import read_base\nwith read_base():\n"
        "    from .base import *\nb = a + 1\n",
    }
    root = write_files(sources)
    text = Config.fromfile(root / "child.py").text
    base_block = f"{root / 'base.py'}\n{sources['base.py']}"
    child_block = f"{root / 'child.py'}\n{sources['child.py']}"
    assert base_block in text and child_block in text
    assert text.index(base_block) < text.index(child_block)


# ------------------------------------------------------------ reserved keys
RESERVED = ["filename", "text", "pretty_text", "env_variables"]


@pytest.mark.parametrize("key", RESERVED)
def test_reserved_key_rejected_in_dict(key):
    with pytest.raises(ConfigKeyError, match=key):
        Config({key: 1, "ok": 2})


@pytest.mark.parametrize("key", RESERVED)
def test_reserved_key_rejected_in_file(write_files, key):
    root = write_files({"cfg.py": f"ok = 1\n{key} = 2\n", "cfg.json": f'{{"{key}": 1}}'})
    for name in ("cfg.py", "cfg.json"):
        with pytest.raises(ConfigKeyError) as info:
            Config.fromfile(root / name)
        assert key in str(info.value)
        assert name in str(info.value)
        assert isinstance(info.value, KeyError)


# ------------------------------------------------------------ custom_imports
def test_custom_imports_imports_the_module(write_files, spy_module):
    spy_module("cadence_test_custom_ok", "VALUE = 1\n")
    root = write_files(
        {
            "cfg.py": """
                custom_imports = dict(imports=['cadence_test_custom_ok'],
                                      allow_failed_imports=False)
                a = 1
                """
        }
    )
    assert "cadence_test_custom_ok" not in sys.modules
    cfg = Config.fromfile(root / "cfg.py")
    assert "cadence_test_custom_ok" in sys.modules
    assert cfg.a == 1
    assert cfg.custom_imports.imports == ["cadence_test_custom_ok"]


def test_custom_imports_failure_raises(write_files, spy_module):
    spy_module("cadence_test_custom_dep", "import cadence_test_missing_dependency_xyz\n")
    root = write_files(
        {
            "missing.py": "custom_imports = dict(imports=['cadence_no_such_module_xyz'])\n",
            "broken.py": "custom_imports = dict(imports=['cadence_test_custom_dep'], "
            "allow_failed_imports=False)\n",
        }
    )
    with pytest.raises(ConfigImportError) as info:
        Config.fromfile(root / "missing.py")
    assert isinstance(info.value, ImportError)
    assert "cadence_no_such_module_xyz" in str(info.value)
    assert "missing.py" in str(info.value)
    with pytest.raises(ImportError, match="cadence_test_custom_dep"):
        Config.fromfile(root / "broken.py")


def test_custom_imports_allow_failed_warns(write_files):
    root = write_files(
        {
            "cfg.py": "custom_imports = dict(imports=['cadence_no_such_module_xyz'], "
            "allow_failed_imports=True)\na = 1\n"
        }
    )
    with pytest.warns(UserWarning, match="cadence_no_such_module_xyz"):
        cfg = Config.fromfile(root / "cfg.py")
    assert cfg.a == 1


def test_custom_imports_skipped_when_disabled(write_files):
    root = write_files({"cfg.py": "custom_imports = dict(imports=['cadence_no_such_xyz'])\n"})
    cfg = Config.fromfile(root / "cfg.py", import_custom_modules=False)
    assert cfg.custom_imports.imports == ["cadence_no_such_xyz"]


# -------------------------------------------------------------- deprecation
def test_deprecation_warns_and_key_is_removed(write_files):
    root = write_files(
        {
            "old.py": """
                _deprecation_ = dict(expected='configs/new.py',
                                     reference='https://example.org/pr/1')
                a = 1
                """,
            "user.py": "_base_ = './old.py'\nb = 2\n",
        }
    )
    for name in ("old.py", "user.py"):
        with pytest.warns(DeprecationWarning) as record:
            cfg = Config.fromfile(root / name)
        message = " ".join(str(w.message) for w in record)
        assert "old.py" in message
        assert "configs/new.py" in message
        assert "https://example.org/pr/1" in message
        assert "_deprecation_" not in cfg
    assert cfg.to_dict() == {"a": 1, "b": 2}


def test_no_deprecation_warning_without_key(write_files):
    root = write_files({"cfg.py": "a = 1\n"})
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        Config.fromfile(root / "cfg.py")


def test_unsupported_suffix_is_an_error(write_files):
    root = write_files({"cfg.txt": "a = 1\n"})
    with pytest.raises(ConfigError, match=r"\.txt"):
        Config.fromfile(root / "cfg.txt")


def test_equality_with_dict_and_config():
    assert Config(dict(a=dict(b=1))) == {"a": {"b": 1}}
    assert Config(dict(a=dict(b=1))) == Config(dict(a=dict(b=1)))
    assert Config(dict(a=dict(b=1))) != Config(dict(a=dict(b=2)))


def test_repr_names_file(write_files):
    root = write_files({"cfg.py": "a = 1\n"})
    assert str(Path(root / "cfg.py")) in repr(Config.fromfile(root / "cfg.py"))
