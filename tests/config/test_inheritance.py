"""``_base_`` inheritance: paths, chains, several bases, ``_delete_``, merge rules."""

from __future__ import annotations

import pytest

from cadence.config import Config, ConfigError, ConfigKeyError, ConfigTypeError


def load(root, name, **kwargs):
    return Config.fromfile(root / name, **kwargs).to_dict()


def contains_key(value, key):
    """Whether ``key`` appears as a dict key anywhere inside ``value``."""
    if isinstance(value, dict):
        return key in value or any(contains_key(v, key) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(contains_key(v, key) for v in value)
    return False


# ------------------------------------------------------------------ paths
def test_base_as_string(write_files):
    root = write_files(
        {
            "base.py": "a = 1\nmodel = dict(type='M', depth=50)\n",
            "child.py": "_base_ = './base.py'\nmodel = dict(depth=101)\nb = 2\n",
        }
    )
    assert load(root, "child.py") == {"a": 1, "model": {"type": "M", "depth": 101}, "b": 2}


def test_base_as_list_of_several_files(write_files):
    root = write_files(
        {
            "models/m.py": "model = dict(type='M')\n",
            "data/d.py": "data = dict(batch_size=2)\n",
            "sched.py": "epochs = 12\n",
            "exp.py": """
                _base_ = ['./models/m.py', './data/d.py', 'sched.py']
                data = dict(batch_size=8)
                """,
        }
    )
    assert load(root, "exp.py") == {
        "model": {"type": "M"},
        "data": {"batch_size": 8},
        "epochs": 12,
    }


def test_relative_paths_with_parent_directory(write_files):
    root = write_files(
        {
            "_base_/models/r50.py": "model = dict(type='R', depth=50)\n",
            "_base_/default.py": "log_level = 'INFO'\n",
            "exps/det/exp.py": """
                _base_ = ['../../_base_/models/r50.py', '../../_base_/default.py']
                model = dict(depth=18)
                """,
        }
    )
    assert load(root, "exps/det/exp.py") == {
        "model": {"type": "R", "depth": 18},
        "log_level": "INFO",
    }


def test_five_level_chain(write_files):
    # l1/l2/l3/l4/l5.py, each file inheriting from the one a folder up
    files = {
        "l1.py": "model = dict(a=1, b=1, c=1, d=1, e=1)\nlevel1 = 1\n",
        "l1/l2.py": "_base_ = '../l1.py'\nmodel = dict(b=2)\nlevel2 = 2\n",
        "l1/l2/l3.py": "_base_ = '../l2.py'\nmodel = dict(c=3)\nlevel3 = 3\n",
        "l1/l2/l3/l4.py": "_base_ = '../l3.py'\nmodel = dict(d=4)\nlevel4 = 4\n",
        "l1/l2/l3/l4/l5.py": "_base_ = '../l4.py'\nmodel = dict(e=5)\nlevel5 = 5\n",
    }
    root = write_files(files)
    assert load(root, "l1/l2/l3/l4/l5.py") == {
        "model": {"a": 1, "b": 2, "c": 3, "d": 4, "e": 5},
        "level1": 1,
        "level2": 2,
        "level3": 3,
        "level4": 4,
        "level5": 5,
    }


def test_yaml_and_json_bases_of_python_child(write_files):
    root = write_files(
        {
            "base.yaml": "model:\n  type: M\n  depth: 50\n",
            "base.json": '{"data": {"batch_size": 2}}',
            "child.py": "_base_ = ['./base.yaml', './base.json']\nmodel = dict(depth=18)\n",
            "child.yaml": "_base_: ./child.py\ndata:\n  batch_size: 4\n",
        }
    )
    assert load(root, "child.py") == {
        "model": {"type": "M", "depth": 18},
        "data": {"batch_size": 2},
    }
    assert load(root, "child.yaml") == {
        "model": {"type": "M", "depth": 18},
        "data": {"batch_size": 4},
    }


def test_same_base_in_two_branches_of_a_chain_loads(write_files):
    root = write_files(
        {
            "common.py": "seed = 0\n",
            "a.py": "_base_ = './common.py'\na = 1\n",
            "b.py": "_base_ = './a.py'\nb = 2\n",
        }
    )
    assert load(root, "b.py") == {"seed": 0, "a": 1, "b": 2}


def test_same_top_level_key_in_two_bases_is_an_error(write_files):
    root = write_files(
        {
            "first.py": "model = dict(type='A')\nonly_first = 1\n",
            "second.py": "model = dict(type='B')\nonly_second = 2\n",
            "child.py": "_base_ = ['./first.py', './second.py']\n",
        }
    )
    with pytest.raises(ConfigKeyError) as info:
        Config.fromfile(root / "child.py")
    assert isinstance(info.value, KeyError)
    message = str(info.value).replace(str(root), "")
    assert "first.py" in message
    assert "second.py" in message
    assert "model" in message
    assert "only_first" not in message


def test_different_top_level_keys_in_bases_are_fine(write_files):
    root = write_files(
        {
            "first.py": "model = dict(type='A')\n",
            "second.py": "data = dict(type='B')\n",
            "child.py": "_base_ = ['./first.py', './second.py']\n",
        }
    )
    assert load(root, "child.py") == {"model": {"type": "A"}, "data": {"type": "B"}}


# -------------------------------------------------------------- _delete_
DELETE_BASE = """
    model = dict(
        type='M',
        backbone=dict(type='R', depth=50, norm=dict(type='BN', eps=1e-5)),
        head=dict(type='H', num_classes=10))
    other = 1
    """


@pytest.mark.parametrize(
    "child, expected_model",
    [
        (
            "model = dict(_delete_=True, type='Other')",
            {"type": "Other"},
        ),
        (
            "model = dict(backbone=dict(_delete_=True, type='ViT'))",
            {"type": "M", "backbone": {"type": "ViT"}, "head": {"type": "H", "num_classes": 10}},
        ),
        (
            "model = dict(backbone=dict(depth=18, norm=dict(_delete_=True, type='GN')))",
            {
                "type": "M",
                "backbone": {"type": "R", "depth": 18, "norm": {"type": "GN"}},
                "head": {"type": "H", "num_classes": 10},
            },
        ),
    ],
    ids=["depth1", "depth2", "depth3"],
)
def test_delete_replaces_instead_of_merging(write_files, child, expected_model):
    root = write_files({"base.py": DELETE_BASE, "child.py": f"_base_ = './base.py'\n{child}\n"})
    data = load(root, "child.py")
    assert data == {"model": expected_model, "other": 1}


def test_delete_replacing_a_scalar_and_a_list(write_files):
    root = write_files(
        {
            "base.py": "a = 1\nb = [1, 2]\nc = dict(d=3)\n",
            "child.py": """
                _base_ = './base.py'
                a = dict(_delete_=True, x=1)
                b = dict(_delete_=True, y=2)
                c = dict(d=dict(_delete_=True, z=3))
                """,
        }
    )
    assert load(root, "child.py") == {"a": {"x": 1}, "b": {"y": 2}, "c": {"d": {"z": 3}}}


def test_delete_keys_never_appear_in_the_result(write_files):
    root = write_files(
        {
            "base.py": "model = dict(backbone=dict(depth=50))\nlst = [dict(a=1)]\n",
            "child.py": """
                _base_ = './base.py'
                model = dict(backbone=dict(_delete_=False, depth=18),
                             neck=dict(_delete_=True, type='FPN'))
                lst = [dict(_delete_=True, b=2), [dict(_delete_=False, c=3)]]
                fresh = dict(_delete_=True, inner=dict(_delete_=True, x=1))
                t = (dict(_delete_=True, y=1),)
                """,
            "alone.py": "a = dict(_delete_=True, b=dict(_delete_=True, c=1))\n",
            "child.json": '{"_base_": "./base.py", "model": {"_delete_": true, "x": 1},'
            ' "new": {"_delete_": true, "y": 2}}',
            "child.yaml": "_base_: ./base.py\nmodel:\n  _delete_: true\n  z: 1\n",
        }
    )
    data = load(root, "child.py")
    assert data == {
        "model": {"backbone": {"depth": 18}, "neck": {"type": "FPN"}},
        "lst": [{"b": 2}, [{"c": 3}]],
        "fresh": {"inner": {"x": 1}},
        "t": ({"y": 1},),
    }
    assert load(root, "alone.py") == {"a": {"b": {"c": 1}}}
    assert load(root, "child.json") == {"model": {"x": 1}, "lst": [{"a": 1}], "new": {"y": 2}}
    assert load(root, "child.yaml") == {"model": {"z": 1}, "lst": [{"a": 1}]}
    for name in ("child.py", "alone.py", "child.json", "child.yaml"):
        assert not contains_key(load(root, name), "_delete_"), name


# --------------------------------------------------------- merge rules
def test_lists_are_replaced_not_merged(write_files):
    root = write_files(
        {
            "base.py": "pipeline = [dict(type='A'), dict(type='B'), dict(type='C')]\n"
            "cfg = dict(ids=[1, 2, 3])\n",
            "child.py": "_base_ = './base.py'\npipeline = [dict(type='X')]\ncfg = dict(ids=[9])\n",
        }
    )
    assert load(root, "child.py") == {"pipeline": [{"type": "X"}], "cfg": {"ids": [9]}}


def test_child_dict_replaces_base_none(write_files):
    root = write_files(
        {
            "base.py": "neck = None\nmodel = dict(type='M', head=None)\n",
            "child.py": "_base_ = './base.py'\nneck = dict(type='FPN')\n"
            "model = dict(head=dict(type='H'))\n",
        }
    )
    assert load(root, "child.py") == {
        "neck": {"type": "FPN"},
        "model": {"type": "M", "head": {"type": "H"}},
    }


def test_child_scalar_replaces_base_dict(write_files):
    root = write_files(
        {
            "base.py": "model = dict(type='M', head=dict(type='H'))\n",
            "child.py": "_base_ = './base.py'\nmodel = dict(head=None)\n",
        }
    )
    assert load(root, "child.py") == {"model": {"type": "M", "head": None}}


@pytest.mark.parametrize(
    "child, key_path, base_type",
    [
        ("seed = dict(value=1)", "seed", "int"),
        ("model = dict(backbone=dict(depth=dict(x=1)))", "model.backbone.depth", "int"),
        ("model = dict(name=dict(x=1))", "model.name", "str"),
        ("model = dict(ids=dict(x=1))", "model.ids", "list"),
    ],
)
def test_child_dict_over_base_non_dict_is_a_type_error(write_files, child, key_path, base_type):
    root = write_files(
        {
            "base.py": "seed = 0\nmodel = dict(name='M', ids=[1], backbone=dict(depth=50))\n",
            "child.py": f"_base_ = './base.py'\n{child}\n",
        }
    )
    with pytest.raises(ConfigTypeError) as info:
        Config.fromfile(root / "child.py")
    assert isinstance(info.value, TypeError)
    assert "child.py" in str(info.value)
    message = str(info.value).replace(str(root), "")
    assert f"'{key_path}'" in message
    assert base_type in message
    assert "_delete_" in message


def test_base_values_as_python_variables(write_files):
    root = write_files(
        {
            "base.py": "optimizer = dict(type='SGD', lr=0.1)\nsizes = [1, 2]\nname = 'r50'\n",
            "child.py": """
                _base_ = './base.py'
                lr = _base_.optimizer.lr * 2
                sizes = _base_.sizes + [3]
                work_dir = 'work/' + _base_.name
                optimizer = dict(lr=_base_['optimizer']['lr'] / 10)
                """,
        }
    )
    assert load(root, "child.py") == {
        "optimizer": {"type": "SGD", "lr": 0.1 / 10},
        "sizes": [1, 2, 3],
        "name": "r50",
        "lr": 0.1 * 2,
        "work_dir": "work/r50",
    }


def test_missing_base_variable_is_an_error_with_suggestion(write_files):
    root = write_files(
        {
            "base.py": "optimizer = dict(lr=0.1)\n",
            "child.py": "_base_ = './base.py'\na = 1\nlr = _base_.optimizer.lrr\n",
        }
    )
    with pytest.raises(ConfigError) as info:
        Config.fromfile(root / "child.py")
    message = str(info.value)
    assert f"{root / 'child.py'}:3" in message
    assert "lrr" in message
    assert "Did you mean 'lr'" in message


def test_base_must_be_literal_paths(write_files):
    root = write_files({"child.py": "x = './base.py'\n_base_ = 5\n"})
    with pytest.raises(ConfigError) as info:
        Config.fromfile(root / "child.py")
    assert "_base_" in str(info.value).replace(str(root), "")
