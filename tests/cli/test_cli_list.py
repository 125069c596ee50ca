"""``cadence list [REGISTRY]``: registered names with their modules, every location imported."""

from __future__ import annotations

import sys
import textwrap

import pytest

from cadence.cli import main
from cadence.registry import HOOKS, MODELS, Registry


def run(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def rows(out):
    """``{name: module path}`` from the indented lines of a listing."""
    return dict(line.split() for line in out.splitlines() if line.startswith("  "))


def test_every_built_in_hook_is_listed_with_its_module(capsys):
    assert run(["list", "hooks"]) == 0
    out = capsys.readouterr().out
    listed = rows(out.split("\n\n")[0])  # the root's block (child registries follow)
    expected = {
        name: f"{obj.__module__}.{obj.__qualname__}" for name, obj in HOOKS.module_dict.items()
    }
    assert listed == expected
    assert "CheckpointHook" in listed and listed["CheckpointHook"].startswith("cadence.hooks.")
    assert out.splitlines()[0] == f"hook (scope 'cadence'): {len(expected)} registered"


def test_lazy_locations_are_imported_for_the_listing(tmp_path, monkeypatch, capsys):
    (tmp_path / "lazy_location_mod.py").write_text(
        textwrap.dedent("""
        from cadence.registry import HOOKS

        @HOOKS.children["lazyscope"].register_module()
        class LazilyRegisteredHook:
            pass
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    child = Registry("hook", parent=HOOKS, scope="lazyscope", locations=["lazy_location_mod"])
    assert "lazy_location_mod" not in sys.modules
    assert run(["list", "hook", "--scope", "lazyscope"]) == 0
    assert rows(capsys.readouterr().out) == {
        "LazilyRegisteredHook": "lazy_location_mod.LazilyRegisteredHook"
    }
    assert list(child._module_dict) == ["LazilyRegisteredHook"]
    monkeypatch.delitem(sys.modules, "lazy_location_mod")


@pytest.mark.parametrize("spelling", ["model", "MODELS", "models"])
def test_registry_spellings(spelling, capsys):
    @MODELS.register_module()
    class ListedNet:
        pass

    assert run(["list", spelling]) == 0
    assert rows(capsys.readouterr().out)["ListedNet"].endswith(".ListedNet")


def test_unknown_registry_exits_2_with_a_suggestion(capsys):
    assert run(["list", "hoks"]) == 2
    captured = capsys.readouterr()
    assert "no registry called 'hoks'" in captured.err and "Did you mean 'hook'?" in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_all_registries_are_listed(capsys):
    assert run(["list"]) == 0
    headers = [x for x in capsys.readouterr().out.splitlines() if "registered" in x]
    for name in ("model", "hook", "loop", "optimizer", "metric", "vis_backend", "data sampler"):
        assert any(h.startswith(f"{name} (scope 'cadence')") for h in headers), name


def test_config_custom_imports_are_listed(tmp_path, monkeypatch, capsys):
    (tmp_path / "listed_mods.py").write_text(
        textwrap.dedent("""
        from cadence.registry import MODELS

        @MODELS.register_module()
        class FromCustomImports:
            pass
        """)
    )
    (tmp_path / "cfg.py").write_text("custom_imports = dict(imports=['listed_mods'])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert run(["list", "model", "--config", str(tmp_path / "cfg.py")]) == 0
    assert rows(capsys.readouterr().out)["FromCustomImports"] == "listed_mods.FromCustomImports"


def test_scope_selects_a_child_registry(capsys):
    child = Registry("model", parent=MODELS, scope="listscope")

    @child.register_module()
    class OnlyInChild:
        pass

    @MODELS.register_module()
    class OnlyInRoot:
        pass

    assert run(["list", "model", "--scope", "listscope"]) == 0
    out = capsys.readouterr().out
    assert rows(out) == {"OnlyInChild": f"{__name__}.{OnlyInChild.__qualname__}"}
    assert out.startswith("model (scope 'listscope'): 1 registered")
    assert run(["list", "model"]) == 0  # without --scope: the root and its children
    listed = rows(capsys.readouterr().out)
    assert "OnlyInChild" in listed and "OnlyInRoot" in listed
    assert run(["list", "model", "--scope", "listscop"]) == 2
    assert "Did you mean 'listscope'?" in capsys.readouterr().err
