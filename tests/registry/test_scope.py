"""Scopes: 'scope.Name' keys, per-build ``_scope_``, the default scope, aliases."""

from __future__ import annotations

import sys
import warnings

import pytest

from cadence.registry import (
    HOOKS,
    MODELS,
    DefaultScope,
    Registry,
    RegistryError,
    default_scope,
    get_default_scope,
    set_default_scope,
)

FAKEPKG = {
    "fakepkg/__init__.py": "",
    "fakepkg/registry.py": """
        from cadence.registry import MODELS as ROOT_MODELS, Registry
        MODELS = Registry('model', parent=ROOT_MODELS, locations=['fakepkg.models'])
    """,
    "fakepkg/models.py": """
        from cadence.registry import get_default_scope
        from .registry import MODELS

        @MODELS.register_module()
        class Net:
            origin = 'fakepkg'

        @MODELS.register_module()
        class FakeOnly:
            origin = 'fakepkg'

        @MODELS.register_module()
        class ScopeRecorder:
            def __init__(self):
                self.seen_scope = get_default_scope()
    """,
}

OTHERPKG = {
    "otherpkg/__init__.py": "",
    "otherpkg/registry.py": """
        from cadence.registry import MODELS as ROOT_MODELS, Registry
        MODELS = Registry('model', parent=ROOT_MODELS)

        @MODELS.register_module()
        class OtherOnly:
            origin = 'otherpkg'
    """,
}


class Net:
    origin = "cadence"


class RootOnly:
    origin = "cadence"


@pytest.fixture
def packages(make_modules):
    """Write fakepkg and otherpkg (not yet imported) and register root models."""
    make_modules({**FAKEPKG, **OTHERPKG})
    MODELS.register_module(module=Net)
    MODELS.register_module(module=RootOnly)
    return make_modules


@pytest.fixture
def fake(packages):
    import fakepkg.registry

    return fakepkg.registry.MODELS


@pytest.fixture
def other(packages):
    import otherpkg.registry

    return otherpkg.registry.MODELS


# ------------------------------------------------------------ scope.Name keys
def test_child_registry_gets_package_scope_and_lazy_locations(fake) -> None:
    assert fake.scope == "fakepkg"
    assert MODELS.children["fakepkg"] is fake
    assert "fakepkg.models" not in sys.modules
    assert fake.get("FakeOnly").origin == "fakepkg"
    assert "fakepkg.models" in sys.modules


def test_scoped_key_reaches_a_child_from_the_root(fake) -> None:
    assert MODELS.get("fakepkg.FakeOnly") is sys.modules["fakepkg.models"].FakeOnly
    assert MODELS.get("FakeOnly") is None  # plain names never look into children


def test_scoped_key_imports_the_scope_registry_module(packages) -> None:
    assert "fakepkg.registry" not in sys.modules
    obj = MODELS.build(dict(type="fakepkg.FakeOnly"))
    assert "fakepkg.registry" in sys.modules
    assert type(obj).origin == "fakepkg"


def test_scoped_key_crosses_into_a_sibling_scope(fake, other) -> None:
    assert fake.get("OtherOnly") is None
    sibling = fake.get("otherpkg.OtherOnly")
    assert sibling is not None and sibling.origin == "otherpkg"
    assert other.get("fakepkg.FakeOnly").origin == "fakepkg"
    assert isinstance(fake.build(dict(type="otherpkg.OtherOnly")), sibling)


def test_scoped_key_crosses_into_the_parent_scope(fake) -> None:
    assert fake.get("Net").origin == "fakepkg"  # own registration shadows the root's
    assert fake.get("cadence.Net") is Net
    assert fake.get("cadence.RootOnly") is RootOnly
    assert type(fake.build(dict(type="cadence.Net"))) is Net


def test_mmengine_scope_is_an_alias_of_cadence(fake) -> None:
    assert MODELS.get("mmengine.Net") is Net
    assert fake.get("mmengine.Net") is Net
    assert type(fake.build(dict(type="mmengine.RootOnly"))) is RootOnly


def test_own_scope_prefix_finds_own_names(fake) -> None:
    assert fake.get("fakepkg.FakeOnly").origin == "fakepkg"
    assert MODELS.get("cadence.RootOnly") is RootOnly


def test_unknown_scope_in_key_lists_the_known_scopes(fake) -> None:
    with pytest.raises(RegistryError) as info:
        MODELS.build(dict(type="nosuchpkg_qq.Net"))
    message = str(info.value)
    assert "nosuchpkg_qq" in message
    assert "cadence" in message
    assert "fakepkg" in message


def test_unknown_name_in_a_known_scope_names_that_scope_and_suggests(fake) -> None:
    with pytest.raises(RegistryError) as info:
        MODELS.build(dict(type="fakepkg.FakeOnyl"))
    message = str(info.value)
    assert "fakepkg" in message
    assert "Did you mean 'FakeOnly'?" in message


# ---------------------------------------------------------- per-build _scope_
def test_scope_key_switches_the_registry_for_one_build(fake) -> None:
    assert type(MODELS.build(dict(type="Net"))) is Net
    built = MODELS.build(dict(type="Net", _scope_="fakepkg"))
    assert type(built).origin == "fakepkg"
    assert type(MODELS.build(dict(type="Net"))) is Net


def test_scope_key_imports_the_scope_registry(packages) -> None:
    assert "fakepkg.registry" not in sys.modules
    built = MODELS.build(dict(type="FakeOnly", _scope_="fakepkg"))
    assert type(built).origin == "fakepkg"


def test_scope_key_is_the_default_scope_during_the_build(fake) -> None:
    before = get_default_scope()
    recorder = MODELS.build(dict(type="ScopeRecorder", _scope_="fakepkg"))
    assert recorder.seen_scope == "fakepkg"
    assert get_default_scope() == before


def test_scope_key_is_restored_when_the_constructor_raises(fake) -> None:
    class Boom:
        def __init__(self) -> None:
            raise RuntimeError("boom")

    fake.register_module(module=Boom)
    with default_scope("otherpkg"):
        with pytest.raises(RuntimeError):
            MODELS.build(dict(type="Boom", _scope_="fakepkg"))
        assert get_default_scope() == "otherpkg"


def test_scope_key_mmengine_builds_from_the_root_without_warning(fake) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert type(fake.build(dict(type="Net", _scope_="mmengine"))) is Net
        assert type(fake.build(dict(type="Net", _scope_="cadence"))) is Net


def test_unknown_scope_key_warns_and_builds_from_the_registry_itself() -> None:
    MODELS.register_module(module=Net)
    with pytest.warns(UserWarning, match="nosuchscope_ww"):
        built = MODELS.build(dict(type="Net", _scope_="nosuchscope_ww"))
    assert type(built) is Net


# ------------------------------------------------------------- default scope
def test_default_scope_context_manager_nests_and_restores() -> None:
    outer = get_default_scope()
    with default_scope("alpha") as value:
        assert value == "alpha"
        assert get_default_scope() == "alpha"
        with default_scope("beta"):
            assert get_default_scope() == "beta"
        assert get_default_scope() == "alpha"
        with default_scope(None) as kept:
            assert kept == "alpha"
            assert get_default_scope() == "alpha"
    assert get_default_scope() == outer


def test_default_scope_is_restored_after_an_exception() -> None:
    outer = get_default_scope()
    with pytest.raises(ValueError):
        with default_scope("alpha"):
            raise ValueError
    assert get_default_scope() == outer


def test_set_and_get_default_scope() -> None:
    set_default_scope("gamma")
    assert get_default_scope() == "gamma"
    set_default_scope(None)
    assert get_default_scope() is None
    with pytest.raises(TypeError):
        set_default_scope(3)
    with pytest.raises(TypeError):
        with default_scope(3):
            pass


def test_set_inside_a_default_scope_block_is_undone_on_exit() -> None:
    set_default_scope("outer")
    with default_scope("inner"):
        set_default_scope("changed")
        assert get_default_scope() == "changed"
    assert get_default_scope() == "outer"


def test_default_scope_gives_the_downstream_registry_precedence(fake) -> None:
    assert type(MODELS.build(dict(type="Net"))) is Net
    with default_scope("fakepkg"):
        assert type(MODELS.build(dict(type="Net"))).origin == "fakepkg"
        assert type(MODELS.build(dict(type="FakeOnly"))).origin == "fakepkg"
        # names only the root has are still found up the parent chain
        assert type(MODELS.build(dict(type="RootOnly"))) is RootOnly
        # an explicit scope still wins over the default one
        assert type(MODELS.build(dict(type="cadence.Net"))) is Net
        assert type(MODELS.build(dict(type="Net", _scope_="mmengine"))) is Net
    assert type(MODELS.build(dict(type="Net"))) is Net


def test_default_scope_imports_the_scope_registry_on_build(packages) -> None:
    assert "fakepkg.registry" not in sys.modules
    with default_scope("fakepkg"):
        assert type(MODELS.build(dict(type="Net"))).origin == "fakepkg"


def test_default_scope_without_a_child_in_this_tree_falls_back(fake) -> None:
    @HOOKS.register_module()
    class SomeHook:
        pass

    with default_scope("fakepkg"):  # fakepkg has no hook registry
        assert type(HOOKS.build(dict(type="SomeHook"))) is SomeHook


def test_default_scope_mmengine_means_the_cadence_root(fake) -> None:
    with default_scope("mmengine"):
        assert type(fake.build(dict(type="Net"))) is Net


# ------------------------------------------------------ mmengine DefaultScope
def test_default_scope_get_instance_sets_the_default() -> None:
    handle = DefaultScope.get_instance("my_runner", scope_name="fakepkg")
    assert handle.scope_name == "fakepkg"
    assert get_default_scope() == "fakepkg"
    current = DefaultScope.get_current_instance()
    assert current is not None and current.scope_name == "fakepkg"


def test_default_scope_current_instance_is_none_when_unset() -> None:
    set_default_scope(None)
    assert DefaultScope.get_current_instance() is None


def test_overwrite_default_scope_is_temporary() -> None:
    DefaultScope.get_instance("runner_a", scope_name="first")
    with DefaultScope.overwrite_default_scope("second"):
        assert DefaultScope.get_current_instance().scope_name == "second"
        assert get_default_scope() == "second"
    assert get_default_scope() == "first"
    with DefaultScope.overwrite_default_scope(None):
        assert get_default_scope() == "first"


def test_default_scope_instance_steers_builds(fake) -> None:
    DefaultScope.get_instance("runner_b", scope_name="fakepkg")
    assert type(MODELS.build(dict(type="Net"))).origin == "fakepkg"


def test_scope_key_from_a_registry_in_another_tree_is_not_found(fake) -> None:
    """'fakepkg.Net' exists among models, not among hooks."""
    assert HOOKS.get("fakepkg.Net") is None
    assert Registry("x", scope="lonely").get("fakepkg.Net") is None
