"""``isolated_registries``: nothing a test registers leaks into the next one.

The two ``LeakProbe`` tests register the same name in MODELS without
``force``; if the autouse fixture let registrations leak, whichever of them
runs second would fail, in either order.
"""

from __future__ import annotations

import warnings

import pytest

from cadence.registry import (
    HOOKS,
    MODELS,
    DefaultScope,
    Registry,
    get_default_scope,
    isolated_registries,
    set_default_scope,
)


def test_leak_probe_first() -> None:
    @MODELS.register_module()
    class LeakProbe:
        pass

    assert MODELS.get("LeakProbe") is LeakProbe


def test_leak_probe_second() -> None:
    @MODELS.register_module()
    class LeakProbe:
        pass

    assert MODELS.get("LeakProbe") is LeakProbe


def test_registrations_inside_the_block_are_undone() -> None:
    before = dict(MODELS.module_dict)
    with isolated_registries():

        @MODELS.register_module()
        class Temporary:
            pass

        assert "Temporary" in MODELS
    assert "Temporary" not in MODELS
    assert MODELS.module_dict == before


def test_forced_replacement_is_restored_to_the_original() -> None:
    class Original:
        pass

    class Replacement:
        pass

    MODELS.register_module("Swappable", module=Original)
    with isolated_registries():
        MODELS.register_module("Swappable", module=Replacement, force=True)
        assert MODELS.get("Swappable") is Replacement
    assert MODELS.get("Swappable") is Original


def test_child_registry_created_inside_the_block_is_gone() -> None:
    children_before = dict(MODELS.children)
    with isolated_registries():
        child = Registry("model", parent=MODELS, scope="ephemeral")
        assert MODELS.children["ephemeral"] is child
        grandchild = Registry("model", parent=child, scope="ephemeral2")
        assert child.children["ephemeral2"] is grandchild
    assert "ephemeral" not in MODELS.children
    assert MODELS.children == children_before
    # the scope can be used again afterwards
    Registry("model", parent=MODELS, scope="ephemeral")


def test_registrations_into_an_existing_child_are_undone() -> None:
    child = Registry("model", parent=MODELS, scope="persistent_child")
    with isolated_registries():

        @child.register_module()
        class InChild:
            pass

        assert child.get("InChild") is InChild
    assert child.get("InChild") is None
    assert MODELS.children["persistent_child"] is child


def test_child_module_imported_inside_the_block_is_gone(make_modules) -> None:
    make_modules(
        {
            "fakepkg/__init__.py": "",
            "fakepkg/registry.py": """
                from cadence.registry import MODELS, Registry
                MODELS_CHILD = Registry('model', parent=MODELS)
            """,
        }
    )
    with isolated_registries():
        import fakepkg.registry  # noqa: F401

        assert "fakepkg" in MODELS.children
    assert "fakepkg" not in MODELS.children


def test_default_scope_is_restored() -> None:
    set_default_scope("before_block")
    with isolated_registries():
        set_default_scope("inside_block")
        DefaultScope.get_instance("runner", scope_name="inside_again")
        assert get_default_scope() == "inside_again"
    assert get_default_scope() == "before_block"


def test_unset_default_scope_is_restored_to_unset() -> None:
    with isolated_registries():
        before = get_default_scope()
        with isolated_registries():
            set_default_scope("leaky")
        assert get_default_scope() == before


def test_state_is_restored_after_an_exception() -> None:
    with pytest.raises(RuntimeError):
        with isolated_registries():
            MODELS.register_module("RaisedInside", module=type("RaisedInside", (), {}))
            set_default_scope("raised_scope")
            raise RuntimeError
    assert "RaisedInside" not in MODELS
    assert get_default_scope() != "raised_scope"


def test_isolating_given_registries_only() -> None:
    standalone = Registry("thing", scope="isolation_standalone")

    class Kept:
        pass

    standalone.register_module(module=Kept)
    with isolated_registries(standalone):
        standalone.register_module("Dropped", module=type("Dropped", (), {}))
        child = Registry("thing", parent=standalone, scope="isolation_child")
        child.register_module("AlsoDropped", module=type("AlsoDropped", (), {}))
    assert standalone.get("Kept") is Kept
    assert standalone.get("Dropped") is None
    assert standalone.children == {}


def test_isolating_one_registry_leaves_others_alone() -> None:
    with isolated_registries(HOOKS):
        MODELS.register_module("OutsideIsolation", module=type("OutsideIsolation", (), {}))
    assert "OutsideIsolation" in MODELS


def test_warn_once_memory_does_not_leak_out_of_the_block() -> None:
    """A warning a test expects must appear again in a later isolated test."""

    class Warned:
        pass

    MODELS.register_module(module=Warned)
    for _ in range(2):
        with isolated_registries():
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                MODELS.build(dict(type="Warned", _scope_="no_such_scope_iso"))
            assert any("no_such_scope_iso" in str(w.message) for w in caught)
