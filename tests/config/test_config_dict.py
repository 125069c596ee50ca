"""``ConfigDict``: attribute access, no silent children, recursive update, copies, key paths."""

from __future__ import annotations

import copy
import pickle

import pytest

from cadence.config import Config, ConfigDict


def test_attribute_and_item_access():
    cd = ConfigDict(a=1, b=dict(c=dict(d=2)))
    assert cd.a == cd["a"] == 1
    assert cd.b.c.d == cd["b"]["c"]["d"] == 2
    assert isinstance(cd.b, ConfigDict) and isinstance(cd.b.c, ConfigDict)


def test_construction_converts_nested_dicts_in_lists_and_tuples():
    cd = ConfigDict({"l": [dict(a=1), [dict(b=2)]], "t": (dict(c=3),)})
    assert isinstance(cd.l[0], ConfigDict) and cd.l[0].a == 1
    assert isinstance(cd.l[1][0], ConfigDict) and cd.l[1][0].b == 2
    assert isinstance(cd.t, tuple) and isinstance(cd.t[0], ConfigDict) and cd.t[0].c == 3


def test_assignment_converts_nested_dicts():
    cd = ConfigDict()
    cd.x = dict(y=dict(z=1))
    cd["w"] = [dict(v=2)]
    assert isinstance(cd.x.y, ConfigDict) and cd.x.y.z == 1
    assert isinstance(cd.w[0], ConfigDict) and cd.w[0].v == 2


def test_missing_key_raises_key_error_with_suggestion():
    cd = ConfigDict(optimizer=dict(lr=0.1))
    with pytest.raises(KeyError) as info:
        cd["optimiser"]
    assert "optimiser" in str(info.value)
    assert "Did you mean 'optimizer'" in str(info.value)


def test_missing_attribute_raises_attribute_error_with_suggestion():
    cd = ConfigDict(optimizer=dict(lr=0.1))
    with pytest.raises(AttributeError) as info:
        cd.optimiser  # noqa: B018
    assert "optimiser" in str(info.value)
    assert "Did you mean 'optimizer'" in str(info.value)
    with pytest.raises(AttributeError, match="Did you mean 'lr'"):
        cd.optimizer.lrr  # noqa: B018


def test_missing_keys_do_not_create_children():
    cd = ConfigDict(a=1)
    assert not hasattr(cd, "b")
    assert getattr(cd, "b", "default") == "default"
    with pytest.raises(AttributeError):
        cd.b.c = 1
    with pytest.raises(KeyError):
        cd["b"]["c"] = 1
    assert dict(cd) == {"a": 1}


def test_get_and_pop():
    cd = ConfigDict(a=1)
    assert cd.get("a") == 1
    assert cd.get("missing") is None
    assert cd.get("missing", 5) == 5
    assert cd.pop("a") == 1
    assert cd.pop("a", "gone") == "gone"
    assert len(cd) == 0


def test_delete_attribute_and_item():
    cd = ConfigDict(a=1, b=2)
    del cd.a
    del cd["b"]
    assert len(cd) == 0
    with pytest.raises(AttributeError):
        del cd.a


def test_update_merges_recursively():
    cd = ConfigDict(model=dict(type="M", backbone=dict(depth=50, norm="BN")), lr=0.1)
    cd.update(model=dict(backbone=dict(depth=101)), lr=0.2)
    assert cd.to_dict() == {
        "model": {"type": "M", "backbone": {"depth": 101, "norm": "BN"}},
        "lr": 0.2,
    }
    cd.update({"model": dict(neck=dict(type="FPN"))})
    assert cd.model.neck.type == "FPN"
    assert cd.model.backbone.depth == 101


def test_update_with_delete_replaces_and_drops_marker():
    cd = ConfigDict(model=dict(type="M", backbone=dict(depth=50, norm="BN")))
    cd.update(model=dict(backbone=dict(_delete_=True, type="ViT")))
    assert cd.to_dict() == {"model": {"type": "M", "backbone": {"type": "ViT"}}}
    cd.update(new=dict(_delete_=True, a=1))
    assert cd.new.to_dict() == {"a": 1}


def test_update_replaces_lists_and_scalars():
    cd = ConfigDict(a=[1, 2, 3], b=dict(c=1))
    cd.update(a=[4], b=5)
    assert cd.to_dict() == {"a": [4], "b": 5}


def test_to_dict_is_plain():
    cd = ConfigDict(a=dict(b=[dict(c=1)]))
    data = cd.to_dict()
    assert data == {"a": {"b": [{"c": 1}]}}
    assert type(data) is dict and type(data["a"]) is dict and type(data["a"]["b"][0]) is dict


def test_shallow_copy_shares_children_deepcopy_does_not():
    cd = ConfigDict(a=dict(b=1))
    shallow = copy.copy(cd)
    shallow2 = cd.copy()
    assert shallow == cd and shallow2 == cd
    assert isinstance(shallow, ConfigDict) and isinstance(shallow2, ConfigDict)
    assert shallow.a is cd.a
    deep = copy.deepcopy(cd)
    assert deep == cd and deep.a is not cd.a
    deep.a.b = 2
    assert cd.a.b == 1


def test_pickle_round_trip():
    cd = ConfigDict(a=dict(b=[dict(c=1)]), t=(1, 2))
    other = pickle.loads(pickle.dumps(cd))
    assert other == cd
    assert isinstance(other, ConfigDict)
    assert isinstance(other.a, ConfigDict)
    assert isinstance(other.a.b[0], ConfigDict)
    assert other.t == (1, 2)


def test_equals_plain_dict():
    assert ConfigDict(a=dict(b=1)) == {"a": {"b": 1}}


# ------------------------------------------------------------- key paths
KEY_PATH = "_cadence_key_path"

NESTED_SOURCES = {
    "cfg.py": """
        model = dict(type='M', backbone=dict(depth=50, norm=dict(type='BN')))
        pipeline = [dict(type='Load'), dict(type='Resize', scale=dict(w=1))]
        """,
    "cfg.json": """
        {"model": {"type": "M", "backbone": {"depth": 50, "norm": {"type": "BN"}}},
         "pipeline": [{"type": "Load"}, {"type": "Resize", "scale": {"w": 1}}]}
        """,
    "pure.py": """
        from cadence.config import read_base
        with read_base():
            from .cfg import *
        model.update(backbone=dict(depth=101))
        """,
}


@pytest.mark.parametrize("name", ["cfg.py", "cfg.json", "pure.py"])
def test_loaded_nodes_remember_their_key_path(write_files, name):
    root = write_files(NESTED_SOURCES)
    cfg = Config.fromfile(root / name)
    assert cfg.model.__dict__[KEY_PATH] == "model"
    assert cfg.model.backbone.__dict__[KEY_PATH] == "model.backbone"
    assert cfg.model.backbone.norm.__dict__[KEY_PATH] == "model.backbone.norm"
    assert cfg.pipeline[0].__dict__[KEY_PATH] == "pipeline.0"
    assert cfg.pipeline[1].scale.__dict__[KEY_PATH] == "pipeline.1.scale"
    # the key path is not a key
    assert KEY_PATH not in cfg.model.backbone
    assert KEY_PATH not in str(cfg.to_dict())


def test_key_paths_of_nodes_added_by_merge_from_dict(write_files):
    root = write_files(NESTED_SOURCES)
    cfg = Config.fromfile(root / "cfg.py")
    cfg.merge_from_dict({"extra.sub.x": 1, "model.head.num_classes": 3})
    assert cfg.extra.sub.__dict__[KEY_PATH] == "extra.sub"
    assert cfg.model.head.__dict__[KEY_PATH] == "model.head"
    assert cfg.model.backbone.__dict__[KEY_PATH] == "model.backbone"


def test_key_path_of_base_reference_copies(write_files):
    root = write_files(
        {
            "base.py": "model = dict(backbone=dict(depth=50))\n",
            "child.py": "_base_ = './base.py'\nteacher = dict(net={{_base_.model.backbone}})\n",
        }
    )
    cfg = Config.fromfile(root / "child.py")
    assert cfg.teacher.net.__dict__[KEY_PATH] == "teacher.net"
    assert cfg.model.backbone.__dict__[KEY_PATH] == "model.backbone"
