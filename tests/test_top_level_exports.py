"""Top-level ``cadence`` names (mmengine's, where cadence has them), imported lazily."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import cadence
from cadence._exports import LAZY_EXPORTS


def test_every_exported_name_is_its_modules_object():
    for name, module in LAZY_EXPORTS.items():
        assert getattr(cadence, name) is getattr(importlib.import_module(module), name), name
    assert set(LAZY_EXPORTS) <= set(cadence.__all__) and "__version__" in cadence.__all__
    assert set(LAZY_EXPORTS) <= set(dir(cadence))


def test_mmengine_style_top_level_imports():
    from cadence import (
        MODELS,
        Config,
        DictAction,
        MessageHub,
        Registry,
        is_list_of,
        mkdir_or_exist,
        print_log,
    )

    assert Config is importlib.import_module("cadence.config").Config
    assert MODELS.name == "model" and isinstance(MODELS, Registry)
    assert callable(print_log) and callable(mkdir_or_exist) and is_list_of([1], int)
    assert DictAction.__name__ == "DictAction" and MessageHub.__name__ == "MessageHub"


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="module 'cadence' has no attribute 'NoSuchThing'"):
        cadence.NoSuchThing  # noqa: B018
    with pytest.raises(ImportError):
        from cadence import NoSuchThing  # noqa: F401


def test_names_are_imported_only_when_read():
    probe = (
        "import sys, json, cadence\n"
        "before = sorted(m for m in sys.modules if m.startswith('cadence.'))\n"
        "cadence.is_str\n"
        "after = sorted(m for m in sys.modules if m.startswith('cadence.'))\n"
        "print(json.dumps([before, after, 'torch' in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, after, torch_loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == ["cadence._exports", "cadence.version"]
    assert "cadence.utils" in after and "cadence.config" not in after and not torch_loaded


def test_version_info_is_mmengines_tuple():
    from cadence.version import parse_version_info

    assert cadence.version_info == tuple(int(p) for p in cadence.__version__.split("."))
    assert parse_version_info("1.2.0rc1") == (1, 2, 0, "rc1")
    assert parse_version_info("2.0.0.dev3") == (2, 0, 0, "dev3")
