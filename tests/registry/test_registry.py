"""Registry basics: registration forms, lookup, duplicates, repr, locations."""

from __future__ import annotations

import functools
import sys
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cadence.registry import MODELS, Registry, RegistryError


def _fresh(name: str = "thing", **kwargs) -> Registry:
    return Registry(name, scope=kwargs.pop("scope", "testscope"), **kwargs)


# ---------------------------------------------------------------- construction
def test_constructor_keeps_name_scope_parent_and_locations() -> None:
    parent = _fresh("model", scope="rootscope")
    child = Registry("model", parent=parent, scope="childscope", locations=["a.b", "c"])
    assert child.name == "model"
    assert child.scope == "childscope"
    assert child.parent is parent
    assert child.locations == ["a.b", "c"]
    assert parent.children == {"childscope": child}
    assert child.root is parent
    assert parent.root is parent
    assert parent.parent is None


@pytest.mark.parametrize(
    "kwargs",
    [
        {"name": 3},
        {"name": "x", "parent": "not a registry"},
        {"name": "x", "scope": 5},
    ],
)
def test_constructor_rejects_wrong_types(kwargs: dict) -> None:
    with pytest.raises(TypeError):
        Registry(**kwargs)


def test_two_children_with_the_same_scope_are_refused() -> None:
    parent = _fresh("model", scope="rootscope")
    Registry("model", parent=parent, scope="dup")
    with pytest.raises(RegistryError, match="dup"):
        Registry("model", parent=parent, scope="dup")


def test_scope_defaults_to_top_level_package_of_the_creating_module(make_modules) -> None:
    make_modules(
        {
            "fakepkg/__init__.py": "",
            "fakepkg/registry.py": """
                from cadence.registry import MODELS, Registry
                MODELS_CHILD = Registry('model', parent=MODELS)
                STANDALONE = Registry('thing')
            """,
            "fakepkg/sub/__init__.py": "",
            "fakepkg/sub/deep.py": """
                from cadence.registry import Registry
                DEEP = Registry('deep thing')
            """,
        }
    )
    import fakepkg.registry
    import fakepkg.sub.deep

    assert fakepkg.registry.MODELS_CHILD.scope == "fakepkg"
    assert fakepkg.registry.STANDALONE.scope == "fakepkg"
    assert fakepkg.sub.deep.DEEP.scope == "fakepkg"
    assert MODELS.children["fakepkg"] is fakepkg.registry.MODELS_CHILD
    assert fakepkg.registry.MODELS_CHILD.parent is MODELS


def test_scope_of_a_registry_created_in_a_top_level_module(make_modules) -> None:
    make_modules(
        {
            "lonemodule.py": """
                from cadence.registry import Registry
                REG = Registry('thing')
            """
        }
    )
    import lonemodule

    assert lonemodule.REG.scope == "lonemodule"


# ---------------------------------------------------------------- registration
def test_register_module_as_decorator_with_parentheses() -> None:
    reg = _fresh()

    @reg.register_module()
    class Alpha:
        pass

    assert reg.get("Alpha") is Alpha
    assert isinstance(Alpha, type)  # the decorator returns the class itself


def test_register_module_as_bare_decorator() -> None:
    reg = _fresh()

    @reg.register_module
    class Beta:
        pass

    @reg.register_module
    def make_gamma():
        return "gamma"

    assert reg.get("Beta") is Beta
    assert reg.get("make_gamma") is make_gamma
    assert make_gamma() == "gamma"


def test_register_module_with_a_name_and_a_list_of_names() -> None:
    reg = _fresh()

    @reg.register_module("Renamed")
    class Original:
        pass

    @reg.register_module(name=["First", "Second"])
    class Multi:
        pass

    assert reg.get("Renamed") is Original
    assert reg.get("Original") is None
    assert reg.get("First") is Multi
    assert reg.get("Second") is Multi
    assert reg.get("Multi") is None
    assert len(reg) == 3


def test_register_module_as_a_call() -> None:
    reg = _fresh()

    class Delta:
        pass

    def epsilon():
        return 1

    assert reg.register_module(module=Delta) is Delta
    assert reg.register_module(name="eps", module=epsilon) is epsilon
    assert reg.register_module(name=("t1", "t2"), module=epsilon) is epsilon
    assert reg.get("Delta") is Delta
    assert reg.get("eps") is epsilon
    assert reg.get("t1") is epsilon and reg.get("t2") is epsilon


@pytest.mark.parametrize("bad_name", [3, ["ok", 4], object()])
def test_register_module_rejects_bad_names(bad_name) -> None:
    reg = _fresh()

    class Thing:
        pass

    with pytest.raises(TypeError):
        reg.register_module(name=bad_name, module=Thing)
    assert len(reg) == 0


def test_register_module_rejects_non_bool_force_and_non_callables() -> None:
    reg = _fresh()

    class Thing:
        pass

    with pytest.raises(TypeError):
        reg.register_module(force=1, module=Thing)
    with pytest.raises(TypeError):
        reg.register_module(name="x", module=42)
    assert len(reg) == 0


def test_duplicate_registration_raises_and_names_the_existing_object() -> None:
    reg = _fresh("widget", scope="dupscope")

    @reg.register_module("Shared")
    class FirstWidget:
        pass

    class SecondWidget:
        pass

    with pytest.raises(RegistryError) as info:
        reg.register_module("Shared", module=SecondWidget)
    message = str(info.value)
    assert "Shared" in message
    assert "widget" in message
    assert FirstWidget.__module__ in message
    assert FirstWidget.__qualname__ in message
    assert reg.get("Shared") is FirstWidget


def test_duplicate_from_a_list_of_names_raises() -> None:
    reg = _fresh()

    class A:
        pass

    class B:
        pass

    reg.register_module("Taken", module=A)
    with pytest.raises(RegistryError, match="Taken"):
        reg.register_module(["Free", "Taken"], module=B)
    assert reg.get("Taken") is A


def test_force_replaces_an_existing_registration() -> None:
    reg = _fresh()

    class Old:
        pass

    class New:
        pass

    reg.register_module("Name", module=Old)
    reg.register_module("Name", module=New, force=True)
    assert reg.get("Name") is New

    @reg.register_module("Name", force=True)
    class Newest:
        pass

    assert reg.get("Name") is Newest
    assert len(reg) == 1


def test_registering_the_same_object_twice_is_allowed() -> None:
    reg = _fresh()

    class Same:
        pass

    reg.register_module(module=Same)
    reg.register_module(module=Same)
    reg.register_module()(Same)
    assert reg.get("Same") is Same
    assert len(reg) == 1


def test_registered_callable_without_qualname_does_not_break_repr_or_errors() -> None:
    """Any callable is accepted, so repr and the duplicate error must cope with one."""
    reg = _fresh()
    first = functools.partial(int, base=2)
    try:
        reg.register_module("Parser", module=first)
    except TypeError:
        return  # refusing non-class, non-function callables is a valid policy too
    assert "Parser" in repr(reg)
    with pytest.raises(RegistryError, match="Parser"):
        reg.register_module("Parser", module=functools.partial(int, base=3))


# -------------------------------------------------------------------- lookup
def test_get_returns_none_for_unknown_names() -> None:
    reg = _fresh()
    assert reg.get("Missing") is None
    assert reg.get("nosuchscope_zz.Missing") is None


def test_get_rejects_non_string_keys() -> None:
    reg = _fresh()
    with pytest.raises(TypeError):
        reg.get(3)


def test_contains_and_len() -> None:
    reg = _fresh()
    assert len(reg) == 0
    assert "Thing" not in reg

    @reg.register_module(["Thing", "Alias"])
    class Thing:
        pass

    assert "Thing" in reg
    assert "Alias" in reg
    assert "Other" not in reg
    assert 3 not in reg
    assert len(reg) == 2


def test_len_counts_only_own_registrations_not_the_parents() -> None:
    parent = _fresh("model", scope="p")
    child = Registry("model", parent=parent, scope="c")

    @parent.register_module()
    class InParent:
        pass

    assert len(child) == 0
    assert "InParent" in child  # but lookups still fall back to the parent
    assert len(parent) == 1


def test_lookup_falls_back_up_the_parent_chain() -> None:
    root = _fresh("model", scope="r")
    child = Registry("model", parent=root, scope="c")
    grandchild = Registry("model", parent=child, scope="g")

    @root.register_module()
    class RootOnly:
        pass

    @child.register_module()
    class ChildOnly:
        pass

    @root.register_module("Both")
    class RootBoth:
        pass

    @child.register_module("Both")
    class ChildBoth:
        pass

    assert grandchild.get("RootOnly") is RootOnly
    assert grandchild.get("ChildOnly") is ChildOnly
    assert grandchild.get("Both") is ChildBoth  # the nearest registration wins
    assert root.get("Both") is RootBoth
    assert root.get("ChildOnly") is None  # never down to children without a scope


def test_dotted_import_path_is_found_when_no_registry_has_it() -> None:
    import collections
    import json.decoder

    reg = _fresh()
    assert reg.get("collections.OrderedDict") is collections.OrderedDict
    assert reg.get("json.decoder.JSONDecoder") is json.decoder.JSONDecoder
    assert "collections.OrderedDict" in reg
    assert reg.get("collections.NoSuchThingHere") is None


def test_repr_is_a_table_of_names_and_objects() -> None:
    reg = _fresh("gadget", scope="reprscope")

    @reg.register_module()
    class FancyGadget:
        pass

    @reg.register_module("plain_function")
    def helper():
        return None

    text = repr(reg)
    assert isinstance(text, str)
    assert "gadget" in text
    assert "reprscope" in text
    assert "FancyGadget" in text
    assert "plain_function" in text
    assert text.index("FancyGadget") < text.index("plain_function")  # sorted rows
    assert FancyGadget.__module__ in text


@settings(max_examples=25, deadline=None)
@given(
    st.sets(
        st.text(alphabet="abcxyzABCXYZ_019", min_size=1, max_size=10).map(lambda s: "N" + s),
        max_size=8,
    )
)
def test_every_registered_name_is_found_and_counted(names: set[str]) -> None:
    reg = _fresh()
    objects = {}
    for name in names:
        obj = type(name, (), {})
        objects[name] = obj
        reg.register_module(name=name, module=obj)
    assert len(reg) == len(names)
    for name, obj in objects.items():
        assert name in reg
        assert reg.get(name) is obj


# ----------------------------------------------------------------- locations
LOCATION_SOURCE = """
    from cadence.registry import Registry
    import {registry_module} as holder

    @holder.REG.register_module()
    class LocatedThing:
        pass

    holder.IMPORT_COUNT.append(__name__)
"""


def _located_registry(make_modules, locations, *, extra=None):
    files = {
        "reghold.py": """
            from cadence.registry import Registry
            IMPORT_COUNT = []
            REG = None
        """,
        "locmod.py": LOCATION_SOURCE.format(registry_module="reghold"),
    }
    files.update(extra or {})
    make_modules(files)
    import reghold

    reghold.REG = Registry("thing", scope="locscope", locations=locations)
    return reghold


def test_locations_are_imported_on_first_lookup_not_before(make_modules) -> None:
    holder = _located_registry(make_modules, ["locmod"])
    reg = holder.REG
    assert reg.locations == ["locmod"]
    assert "locmod" not in sys.modules

    located = reg.get("LocatedThing")

    assert "locmod" in sys.modules
    assert located is sys.modules["locmod"].LocatedThing
    assert holder.IMPORT_COUNT == ["locmod"]


@pytest.mark.parametrize(
    "first_use",
    [
        lambda reg: len(reg),
        lambda reg: "LocatedThing" in reg,
        lambda reg: reg.build({"type": "LocatedThing"}),
        lambda reg: list(reg.module_dict),
        repr,
    ],
    ids=["len", "contains", "build", "module_dict", "repr"],
)
def test_every_kind_of_lookup_imports_the_locations(make_modules, first_use) -> None:
    holder = _located_registry(make_modules, ["locmod"])
    assert "locmod" not in sys.modules
    first_use(holder.REG)
    assert "locmod" in sys.modules
    assert "LocatedThing" in holder.REG.module_dict


def test_locations_are_imported_only_once(make_modules) -> None:
    holder = _located_registry(make_modules, ["locmod"])
    holder.REG.get("LocatedThing")
    holder.REG.get("Unknown")
    len(holder.REG)
    assert holder.IMPORT_COUNT == ["locmod"]


def test_a_child_lookup_imports_the_parents_locations(make_modules) -> None:
    holder = _located_registry(make_modules, ["locmod"])
    child = Registry("thing", parent=holder.REG, scope="locchild")
    assert "locmod" not in sys.modules
    assert child.get("LocatedThing") is sys.modules["locmod"].LocatedThing


def test_location_that_fails_to_import_warns_and_is_named_in_lookup_errors(
    make_modules,
) -> None:
    make_modules({"brokenloc.py": "import nonexistent_dependency_qq\n"})
    reg = _fresh("thing", scope="brokenscope", locations=["brokenloc"])

    with pytest.warns(UserWarning, match="brokenloc"):
        assert reg.get("Anything") is None

    with pytest.raises(RegistryError) as info:
        reg.build({"type": "Anything"})
    message = str(info.value)
    assert "brokenloc" in message
    assert "nonexistent_dependency_qq" in message


def test_other_locations_still_load_after_one_fails_with_import_error(make_modules) -> None:
    holder = _located_registry(
        make_modules,
        ["brokenloc", "locmod"],
        extra={"brokenloc.py": "import nonexistent_dependency_qq\n"},
    )
    with pytest.warns(UserWarning, match="brokenloc"):
        found = holder.REG.get("LocatedThing")
    assert found is sys.modules["locmod"].LocatedThing


def _lookup_ignoring_first_failure(reg: Registry, key: str):
    """First lookup of a registry whose location raises: raising or warning is fine."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return reg.get(key)
        except RuntimeError:
            return None


def test_location_raising_at_import_is_not_forgotten_by_later_lookups(make_modules) -> None:
    make_modules({"explodingloc.py": "raise RuntimeError('boom-marker-77')\n"})
    reg = _fresh("thing", scope="boomscope", locations=["explodingloc"])
    _lookup_ignoring_first_failure(reg, "Anything")

    with pytest.raises(RegistryError) as info:
        reg.build({"type": "Anything"})
    message = str(info.value)
    assert "explodingloc" in message
    assert "boom-marker-77" in message


def test_location_raising_at_import_does_not_stop_later_locations(make_modules) -> None:
    holder = _located_registry(
        make_modules,
        ["explodingloc", "locmod"],
        extra={"explodingloc.py": "raise RuntimeError('boom-marker-77')\n"},
    )
    _lookup_ignoring_first_failure(holder.REG, "LocatedThing")
    assert holder.REG.get("LocatedThing") is sys.modules["locmod"].LocatedThing


def test_mmengine_names_and_words_of_registration_and_building():
    """mmengine's ``_get_root_registry`` and the phrases its users match (issue #28)."""
    from cadence.registry import build_from_cfg
    from cadence.utils.manager import ManagerMixin

    root = Registry("animal")
    child = Registry("dog", parent=root, scope="kennel")
    assert child._get_root_registry() is root and root._get_root_registry() is root
    with pytest.raises(TypeError, match="force must be a boolean, but got <class 'int'>"):
        root.register_module(force=1)
    with pytest.raises(TypeError, match="module must be Callable, but got <class 'str'>"):
        root.register_module(module="string")
    with pytest.raises(TypeError, match="registry must be a mmengine.Registry object"):
        build_from_cfg(dict(type="X"), "BACKBONES")
    with pytest.raises(KeyError, match='must contain the key "type"'):
        build_from_cfg(dict(depth=50), root)

    @root.register_module()
    class Tracker(ManagerMixin):
        def __init__(self, name: str) -> None:
            super().__init__(name)

    built = build_from_cfg(dict(type="Tracker", name="t1"), root)  # the named instance,
    assert Tracker.get_current_instance() is built  # as mmengine's builder makes it
    assert build_from_cfg(dict(type="Tracker", name="t1"), root) is built
    assert "Registry of animal" in repr(root)
