"""``Config.provenance``: the file and line that set each value."""

from __future__ import annotations

import pytest

from cadence.config import Config, Origin

GRANDPARENT = """
    optim_wrapper = dict(
        type='OptimWrapper',
        optimizer=dict(type='SGD', lr=0.1, momentum=0.9))
    only_base = 7
    pipeline = [dict(type='Load'), dict(type='Resize', size=3)]

    model = dict(
        type='M',
        head=dict(
            num_classes=10,
            loss=dict(type='CE', weight=1.0)))
    """
PARENT = """
    _base_ = './grandparent.py'
    optim_wrapper = dict(optimizer=dict(momentum=0.8))
    """
CHILD = """
    _base_ = './parent.py'
    optim_wrapper = dict(
        optimizer=dict(lr=0.01))
    pipeline = [dict(type='Load'),
                dict(type='Flip')]
    model = dict(head=dict(_delete_=True, type='H'))
    """


@pytest.fixture
def chain(write_files):
    root = write_files({"grandparent.py": GRANDPARENT, "parent.py": PARENT, "child.py": CHILD})
    return root, Config.fromfile(root / "child.py")


def at(path, line):
    return (str(path), line)


def where(origin):
    assert isinstance(origin, Origin), origin
    return (origin.filename, origin.line)


def test_key_set_in_grandparent_overridden_in_child(chain, find_line):
    root, cfg = chain
    child = root / "child.py"
    assert where(cfg.provenance("optim_wrapper.optimizer.lr")) == at(
        child, find_line(child, "lr=0.01")
    )


def test_key_overridden_in_middle_file(chain, find_line):
    root, cfg = chain
    parent = root / "parent.py"
    assert cfg.optim_wrapper.optimizer.momentum == 0.8
    assert where(cfg.provenance("optim_wrapper.optimizer.momentum")) == at(
        parent, find_line(parent, "momentum=0.8")
    )


def test_key_only_the_base_sets(chain, find_line):
    root, cfg = chain
    gp = root / "grandparent.py"
    assert where(cfg.provenance("only_base")) == at(gp, find_line(gp, "only_base = 7"))
    assert where(cfg.provenance("optim_wrapper.type")) == at(gp, find_line(gp, "OptimWrapper"))
    assert where(cfg.provenance("optim_wrapper.optimizer.type")) == at(
        gp, find_line(gp, "type='SGD'")
    )
    assert where(cfg.provenance("model.type")) == at(gp, find_line(gp, "type='M'"))


def test_list_elements(chain, find_line):
    root, cfg = chain
    child = root / "child.py"
    assert where(cfg.provenance("pipeline.0.type")) == at(child, find_line(child, "'Load'"))
    assert where(cfg.provenance("pipeline.1.type")) == at(child, find_line(child, "'Flip'"))
    assert where(cfg.provenance("pipeline.1")) == at(child, find_line(child, "'Flip'"))


def test_delete_drops_the_base_records_under_the_key(chain, find_line):
    root, cfg = chain
    child = root / "child.py"
    head_line = find_line(child, "_delete_=True")
    assert where(cfg.provenance("model.head")) == at(child, head_line)
    assert where(cfg.provenance("model.head.type")) == at(child, head_line)
    assert {k for k in cfg.provenance() if k.startswith("model.head")} == {"model.head.type"}
    # a value set in code later falls back to the nearest recorded key, which
    # must be the child's replacement, not the grandparent's dropped subtree
    cfg.model.head["num_classes"] = 3
    cfg.model.head["loss"] = dict(weight=2.0)
    assert where(cfg.provenance("model.head.num_classes")) == at(child, head_line)
    assert where(cfg.provenance("model.head.loss.weight")) == at(child, head_line)


def test_provenance_of_every_leaf(chain, find_line):
    root, cfg = chain
    gp, parent, child = root / "grandparent.py", root / "parent.py", root / "child.py"
    everything = {key: where(origin) for key, origin in cfg.provenance().items()}
    assert everything == {
        "optim_wrapper.type": at(gp, find_line(gp, "OptimWrapper")),
        "optim_wrapper.optimizer.type": at(gp, find_line(gp, "type='SGD'")),
        "optim_wrapper.optimizer.lr": at(child, find_line(child, "lr=0.01")),
        "optim_wrapper.optimizer.momentum": at(parent, find_line(parent, "momentum=0.8")),
        "only_base": at(gp, find_line(gp, "only_base")),
        "pipeline.0.type": at(child, find_line(child, "'Load'")),
        "pipeline.1.type": at(child, find_line(child, "'Flip'")),
        "model.type": at(gp, find_line(gp, "type='M'")),
        "model.head.type": at(child, find_line(child, "_delete_=True")),
    }


def test_merge_from_dict_origin(chain):
    _, cfg = chain
    cfg.merge_from_dict({"optim_wrapper.optimizer.lr": 0.5, "pipeline.1.type": "Pad"})
    for key in ("optim_wrapper.optimizer.lr", "pipeline.1.type"):
        origin = cfg.provenance(key)
        assert isinstance(origin, Origin)
        assert origin.filename == "--cfg-options"
    assert cfg.provenance()["optim_wrapper.optimizer.lr"].filename == "--cfg-options"
    assert cfg.provenance("optim_wrapper.optimizer.momentum").filename.endswith("parent.py")


def test_merge_from_dict_replacing_a_subtree_forgets_old_records(chain):
    _, cfg = chain
    cfg.merge_from_dict({"optim_wrapper.optimizer": "AdamW"})
    assert cfg.provenance("optim_wrapper.optimizer").filename == "--cfg-options"
    assert not any(k.startswith("optim_wrapper.optimizer.") for k in cfg.provenance())


def test_bad_key_raises_key_error_with_suggestion(chain):
    _, cfg = chain
    with pytest.raises(KeyError) as info:
        cfg.provenance("optim_wrapper.optimiser.lr")
    assert "optimiser" in str(info.value)
    assert "Did you mean 'optimizer'" in str(info.value)
    with pytest.raises(KeyError):
        cfg.provenance("pipeline.5.type")


def test_pure_python_update_call(write_files, find_line):
    root = write_files(
        {
            "base.py": "model = dict(type='M', depth=50, head=dict(num_classes=10, act='relu'))\n"
            "lr = 0.1\n",
            "child.py": """
                from cadence.config import read_base
                with read_base():
                    from .base import *

                model.update(
                    depth=101,
                    head=dict(num_classes=20))
                extra = dict(x=1)
                """,
        }
    )
    cfg = Config.fromfile(root / "child.py")
    base, child = root / "base.py", root / "child.py"
    assert where(cfg.provenance("model.depth")) == at(child, find_line(child, "depth=101"))
    assert where(cfg.provenance("model.head.num_classes")) == at(
        child, find_line(child, "num_classes=20")
    )
    assert where(cfg.provenance("model.head.act")) == at(base, 1)
    assert where(cfg.provenance("model.type")) == at(base, 1)
    assert where(cfg.provenance("lr")) == at(base, 2)
    assert where(cfg.provenance("extra.x")) == at(child, find_line(child, "extra"))


def test_yaml_lines(write_files, find_line):
    root = write_files(
        {
            "base.py": "model = dict(type='M', depth=50)\n",
            "child.yaml": """
                _base_: ./base.py
                model:
                  depth: 18
                pipeline:
                  - type: Load
                  - type: Flip
                """,
        }
    )
    cfg = Config.fromfile(root / "child.yaml")
    child = root / "child.yaml"
    assert where(cfg.provenance("model.depth")) == at(child, find_line(child, "depth: 18"))
    assert where(cfg.provenance("pipeline.1.type")) == at(child, find_line(child, "Flip"))
    assert where(cfg.provenance("model.type")) == at(root / "base.py", 1)


def test_origin_str():
    assert str(Origin("cfg.py", 3)) == "cfg.py:3"
    assert str(Origin("--cfg-options")) == "--cfg-options"


def test_nodes_remember_their_origin(chain, find_line):
    root, cfg = chain
    child = root / "child.py"
    assert cfg.optim_wrapper.optimizer.__dict__["_cadence_origin"] == (
        f"{child}:{find_line(child, 'optimizer=dict(lr=0.01)')}"
    )
