"""Pure-Python configs (``with read_base():``), lazy imports, and which names become keys."""

from __future__ import annotations

import os
import sys
import textwrap

import pytest
import torch

from cadence.config import Config, ConfigError, LazyObject
from cadence.registry import Registry

SPY_BODY = """
    class Thing:
        def __init__(self, depth=0, **kwargs):
            self.depth = depth
            self.kwargs = kwargs

    def helper():
        return 'helped'
    """

READ_BASE = "from cadence.config import read_base\n"


def pure(body: str) -> str:
    """A pure-Python config: the read_base import, then ``body`` dedented."""
    return READ_BASE + textwrap.dedent(body).lstrip("\n")


# ------------------------------------------------------------- read_base
def test_star_import_from_base(write_files):
    root = write_files(
        {
            "base.py": "model = dict(type='M', depth=50)\nlr = 0.1\n",
            "child.py": READ_BASE
            + "with read_base():\n    from .base import *\n\nlr = lr * 2\nextra = model['type']\n",
        }
    )
    cfg = Config.fromfile(root / "child.py")
    assert cfg.to_dict() == {"model": {"type": "M", "depth": 50}, "lr": 0.1 * 2, "extra": "M"}


def test_named_import_from_base(write_files):
    root = write_files(
        {
            "base.py": "model = dict(type='M')\nlr = 0.1\nunused = 3\n",
            "child.py": READ_BASE + "with read_base():\n    from .base import lr, model\n\n"
            "scaled = lr * 10\n",
        }
    )
    cfg = Config.fromfile(root / "child.py")
    assert cfg.to_dict() == {"lr": 0.1, "model": {"type": "M"}, "scaled": 0.1 * 10}
    assert "unused" not in cfg


def test_import_from_parent_folder(write_files):
    root = write_files(
        {
            "_base_/models/r50.py": "model = dict(type='R', depth=50)\n",
            "_base_/schedule.py": "epochs = 12\n",
            "exps/det/exp.py": READ_BASE + "with read_base():\n"
            "    from ..._base_.models.r50 import *\n"
            "    from ..._base_.schedule import *\n"
            "model.update(depth=18)\n",
            "exps/one_up.py": READ_BASE
            + "with read_base():\n    from .._base_.schedule import *\n",
        }
    )
    assert Config.fromfile(root / "exps/det/exp.py").to_dict() == {
        "model": {"type": "R", "depth": 18},
        "epochs": 12,
    }
    assert Config.fromfile(root / "exps/one_up.py").to_dict() == {"epochs": 12}


def test_chain_of_pure_configs(write_files):
    root = write_files(
        {
            "a.py": "model = dict(type='M', depth=50, head=dict(num_classes=10))\n",
            "b.py": READ_BASE + "with read_base():\n    from .a import *\n"
            "model.update(head=dict(num_classes=20))\n",
            "c.py": READ_BASE + "with read_base():\n    from .b import *\n"
            "model.update(depth=101)\n",
        }
    )
    assert Config.fromfile(root / "c.py").to_dict() == {
        "model": {"type": "M", "depth": 101, "head": {"num_classes": 20}}
    }


def test_update_on_base_variable_merges_recursively(write_files):
    root = write_files(
        {
            "base.py": """
                model = dict(type='M', backbone=dict(depth=50, norm=dict(type='BN')),
                             head=dict(type='H', loss=dict(type='CE', weight=1.0)))
                """,
            "child.py": pure(
                """
            with read_base():
                from .base import *

            model.update(backbone=dict(depth=101), head=dict(loss=dict(weight=0.5)))
            model.head.update(dict(extra=1))
            """
            ),
            "replace.py": pure(
                """
            with read_base():
                from .base import *

            model.update(backbone=dict(_delete_=True, type='ViT'))
            """
            ),
            "reassign.py": pure(
                """
            with read_base():
                from .base import *

            model = dict(type='Other')
            """
            ),
        }
    )
    assert Config.fromfile(root / "child.py").to_dict() == {
        "model": {
            "type": "M",
            "backbone": {"depth": 101, "norm": {"type": "BN"}},
            "head": {"type": "H", "loss": {"type": "CE", "weight": 0.5}, "extra": 1},
        }
    }
    replaced = Config.fromfile(root / "replace.py").to_dict()
    assert replaced["model"]["backbone"] == {"type": "ViT"}
    # Python assignment semantics: a re-assigned variable replaces the base's
    assert Config.fromfile(root / "reassign.py").to_dict() == {"model": {"type": "Other"}}


def test_base_file_is_not_changed_by_child_update(write_files):
    root = write_files(
        {
            "base.py": "model = dict(depth=50)\n",
            "child.py": READ_BASE + "with read_base():\n    from .base import *\n"
            "model.update(depth=18)\n",
        }
    )
    assert Config.fromfile(root / "child.py").model.depth == 18
    assert Config.fromfile(root / "base.py").model.depth == 50


# ---------------------------------------------------------- lazy imports
@pytest.mark.parametrize("lazy_import", [None, True])
def test_lazy_import_not_imported_until_accessed(write_files, spy_module, lazy_import):
    spy_module("cadence_spy_lazy", SPY_BODY)
    root = write_files(
        {
            "base.py": "from cadence_spy_lazy import Thing\nmodel = dict(type=Thing, depth=3)\n",
            "child.py": READ_BASE
            + "with read_base():\n    from .base import *\n\nmodel.update(depth=5)\n",
        }
    )
    cfg = Config.fromfile(root / "child.py", lazy_import=lazy_import)
    assert "cadence_spy_lazy" not in sys.modules
    assert cfg.to_dict() == {"model": {"type": "cadence_spy_lazy.Thing", "depth": 5}}
    assert cfg.model.depth == 5
    assert "cadence_spy_lazy" not in sys.modules
    thing_cls = cfg.model.type
    assert "cadence_spy_lazy" in sys.modules
    assert thing_cls is sys.modules["cadence_spy_lazy"].Thing
    assert cfg.model["type"] is thing_cls


def test_lazy_import_resolved_when_built(write_files, spy_module):
    spy_module("cadence_spy_build", SPY_BODY)
    root = write_files(
        {
            "cfg.py": "from cadence_spy_build import Thing\nmodel = dict(type=Thing, depth=7)\n",
        }
    )
    cfg = Config.fromfile(root / "cfg.py")
    assert "cadence_spy_build" not in sys.modules
    obj = Registry("cadence_test_models").build(cfg.model)
    assert "cadence_spy_build" in sys.modules
    assert isinstance(obj, sys.modules["cadence_spy_build"].Thing)
    assert obj.depth == 7


def test_module_import_attribute_is_lazy(write_files, spy_module):
    spy_module("cadence_spy_module", SPY_BODY)
    root = write_files(
        {"cfg.py": "import cadence_spy_module\nmodel = dict(type=cadence_spy_module.Thing)\n"}
    )
    cfg = Config.fromfile(root / "cfg.py")
    assert "cadence_spy_module" not in sys.modules
    assert cfg.to_dict() == {"model": {"type": "cadence_spy_module.Thing"}}
    assert "cadence_spy_module" not in cfg
    assert cfg.model.type is sys.modules["cadence_spy_module"].Thing


def test_module_that_fails_on_import_does_not_break_loading(write_files, spy_module):
    spy_module("cadence_spy_raises", "raise RuntimeError('cadence_spy_raises was imported')\n")
    root = write_files(
        {
            "cfg.py": "from cadence_spy_raises import Broken\nmodel = dict(type=Broken, depth=1)\n",
        }
    )
    cfg = Config.fromfile(root / "cfg.py")
    assert cfg.to_dict() == {"model": {"type": "cadence_spy_raises.Broken", "depth": 1}}
    assert cfg.model.depth == 1
    with pytest.raises(Exception) as info:
        cfg.model.type  # noqa: B018
    chain = f"{info.value} {info.value.__cause__}"
    assert "cadence_spy_raises was imported" in chain


def test_torch_import_used_as_type(write_files):
    root = write_files(
        {
            "cfg.py": pure(
                """
            from torch.optim import SGD
            from torch.optim.lr_scheduler import MultiStepLR as MS

            optim_wrapper = dict(optimizer=dict(type=SGD, lr=0.01))
            param_scheduler = [dict(type=MS, milestones=[8, 11])]
            """
            )
        }
    )
    cfg = Config.fromfile(root / "cfg.py", lazy_import=True)
    assert cfg.to_dict() == {
        "optim_wrapper": {"optimizer": {"type": "torch.optim.SGD", "lr": 0.01}},
        "param_scheduler": [
            {"type": "torch.optim.lr_scheduler.MultiStepLR", "milestones": [8, 11]}
        ],
    }
    assert cfg.optim_wrapper.optimizer.type is torch.optim.SGD
    assert cfg.param_scheduler[0].type is torch.optim.lr_scheduler.MultiStepLR
    raw = dict.__getitem__(cfg.optim_wrapper.optimizer, "type")
    assert isinstance(raw, LazyObject) and raw.dotted_path == "torch.optim.SGD"


def test_imported_names_are_not_keys(write_files, spy_module):
    spy_module("cadence_spy_names", SPY_BODY)
    root = write_files(
        {
            "base.py": "from cadence_spy_names import Thing\nfrom torch.optim import SGD\n"
            "model = dict(type=Thing)\n",
            "child.py": pure(
                """
            with read_base():
                from .base import *
            import os
            import os.path as osp
            from torch.nn import Linear
            import cadence_spy_names
            from cadence_spy_names import helper

            layer = dict(type=Linear)
            optim = dict(type=SGD)
            """
            ),
        }
    )
    cfg = Config.fromfile(root / "child.py")
    assert set(cfg.keys()) == {"model", "layer", "optim"}
    for name in ("Thing", "SGD", "os", "osp", "Linear", "cadence_spy_names", "helper", "read_base"):
        assert name not in cfg
    assert "cadence_spy_names" not in sys.modules


def test_stdlib_imports_run_normally(write_files):
    root = write_files(
        {
            "cfg.py": pure(
                """
            with read_base():
                from .base import *
            import os
            import math
            from os.path import join

            root = os.path.join('a', 'b')
            other = join(root, 'c')
            pi2 = math.pi * 2
            """
            ),
            "base.py": "x = 1\n",
        }
    )
    cfg = Config.fromfile(root / "cfg.py")
    assert cfg.root == os.path.join("a", "b")
    assert cfg.other == os.path.join("a", "b", "c")
    assert isinstance(cfg.pi2, float) and cfg.pi2 > 6
    assert set(cfg.keys()) == {"x", "root", "other", "pi2"}


def test_lazy_import_true_on_plain_file(write_files, spy_module):
    spy_module("cadence_spy_forced", SPY_BODY)
    root = write_files(
        {
            "plain.py": "a = 1\nb = dict(c=[1, 2])\n",
            "imports.py": "from cadence_spy_forced import Thing\nm = dict(type=Thing)\n",
        }
    )
    assert Config.fromfile(root / "plain.py", lazy_import=True).to_dict() == {
        "a": 1,
        "b": {"c": [1, 2]},
    }
    cfg = Config.fromfile(root / "imports.py", lazy_import=True)
    assert "cadence_spy_forced" not in sys.modules
    assert cfg.to_dict() == {"m": {"type": "cadence_spy_forced.Thing"}}


def test_lazy_import_false_refuses_read_base(write_files):
    root = write_files(
        {
            "base.py": "a = 1\n",
            "child.py": READ_BASE + "with read_base():\n    from .base import *\n",
        }
    )
    with pytest.raises(ConfigError, match="child.py"):
        Config.fromfile(root / "child.py", lazy_import=False)


# ------------------------------------------------------------------ errors
def test_relative_import_outside_read_base_is_an_error(write_files):
    root = write_files(
        {
            "base.py": "a = 1\n",
            "child.py": READ_BASE + "with read_base():\n    from .base import a\n"
            "from .base import *\n",
        }
    )
    with pytest.raises(ConfigError) as info:
        Config.fromfile(root / "child.py")
    assert f"{root / 'child.py'}:4" in str(info.value)
    assert "read_base" in str(info.value).replace(str(root), "")


@pytest.mark.parametrize("lazy_import", [None, True])
def test_base_mixed_with_read_base_is_an_error(write_files, lazy_import):
    root = write_files(
        {
            "base.py": "a = 1\n",
            "child.py": READ_BASE
            + "_base_ = './base.py'\nwith read_base():\n    from .base import a\nb = a\n",
        }
    )
    with pytest.raises(ConfigError) as info:
        Config.fromfile(root / "child.py", lazy_import=lazy_import)
    assert "child.py" in str(info.value)
    message = str(info.value).replace(str(root), "")
    assert "_base_" in message and "read_base" in message


def test_only_imports_allowed_inside_read_base(write_files):
    root = write_files(
        {
            "base.py": "a = 1\n",
            "child.py": READ_BASE + "with read_base():\n    from .base import a\n    b = 2\n",
        }
    )
    with pytest.raises(ConfigError) as info:
        Config.fromfile(root / "child.py")
    assert f"{root / 'child.py'}:4" in str(info.value)


def test_missing_name_in_base_is_an_error_with_suggestion(write_files):
    root = write_files(
        {
            "base.py": "learning_rate = 0.1\n",
            "child.py": READ_BASE + "with read_base():\n    from .base import learning_rat\n",
        }
    )
    with pytest.raises(ConfigError) as info:
        Config.fromfile(root / "child.py")
    message = str(info.value)
    assert f"{root / 'child.py'}:3" in message
    assert "learning_rat" in message
    assert "Did you mean 'learning_rate'" in message


# ---------------------------------------------- which names become keys
CLASSIC_NAMES = """
    import os
    import os.path as osp
    from collections import OrderedDict
    from math import floor

    def helper(x):
        return x * 2

    class Local:
        pass

    value = helper(2)
    path = osp.join('a', 'b')
    _private = 1
    __dunder = 2
    __all__ = ['value']
    nested = dict(fn=floor)
    """


@pytest.mark.parametrize("lazy_import", [None, True])
def test_modules_functions_classes_do_not_leak(write_files, lazy_import):
    root = write_files({"cfg.py": CLASSIC_NAMES})
    cfg = Config.fromfile(root / "cfg.py", lazy_import=lazy_import)
    assert set(cfg.keys()) == {"value", "path", "_private", "nested"}
    assert cfg.value == 4
    assert cfg.path == os.path.join("a", "b")
    assert cfg._private == 1
    import math

    assert cfg.nested.fn is math.floor


def test_names_in_a_classic_child_do_not_leak(write_files):
    root = write_files(
        {
            "base.py": "a = 1\n",
            "child.py": "_base_ = './base.py'\nimport os\n\n"
            "def f():\n    return 1\n\nclass C:\n    pass\n\n_x = f()\n__y = 2\n",
        }
    )
    assert Config.fromfile(root / "child.py").to_dict() == {"a": 1, "_x": 1}


def test_pure_config_double_underscore_names_dropped(write_files):
    root = write_files(
        {
            "base.py": "_kept = 1\n__dropped = 2\nplain = 3\n",
            "child.py": READ_BASE + "with read_base():\n    from .base import *\n"
            "_also_kept = _kept + 1\n",
        }
    )
    cfg = Config.fromfile(root / "child.py")
    assert cfg.to_dict() == {"_kept": 1, "plain": 3, "_also_kept": 2}
