"""import_object: dotted paths to modules, classes and nested attributes."""

from __future__ import annotations

import collections
import importlib
import json
import json.decoder
import sys
import textwrap

import pytest

from cadence.registry import import_object as reexported
from cadence.utils import import_object


@pytest.fixture
def modules(tmp_path, monkeypatch):
    """Write modules to tmp_path and make them importable; forget them afterwards."""
    monkeypatch.syspath_prepend(str(tmp_path))
    written: set[str] = set()

    def write(files: dict[str, str]) -> None:
        for rel, source in files.items():
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
            written.add(rel.split("/")[0].removesuffix(".py"))
        importlib.invalidate_caches()

    yield write
    for name in list(sys.modules):
        if name.split(".")[0] in written:
            del sys.modules[name]


def test_imports_a_class_from_a_module() -> None:
    assert import_object("collections.OrderedDict") is collections.OrderedDict


def test_imports_nested_attributes() -> None:
    assert import_object("collections.OrderedDict.fromkeys") == collections.OrderedDict.fromkeys


def test_imports_a_module_itself() -> None:
    assert import_object("json") is json
    assert import_object("json.decoder") is json.decoder


def test_imports_a_submodule_the_package_does_not_import(modules) -> None:
    modules(
        {
            "impkg/__init__.py": "",
            "impkg/hidden.py": "class Secret:\n    pass\n",
        }
    )
    import impkg

    assert not hasattr(impkg, "hidden")
    secret = import_object("impkg.hidden.Secret")
    assert secret is sys.modules["impkg.hidden"].Secret


@pytest.mark.parametrize(
    "path",
    ["no_such_module_zz.Thing", "collections.NoSuchThing", "json.decoder.Nope.deeper"],
)
def test_missing_module_or_attribute_gives_none(path: str) -> None:
    assert import_object(path) is None


def test_missing_submodule_of_an_existing_package_gives_none(modules) -> None:
    modules({"impkg/__init__.py": ""})
    assert import_object("impkg.missing_sub.Thing") is None


def test_missing_dependency_inside_an_existing_module_propagates(modules) -> None:
    modules({"brokenmod.py": "import no_such_dependency_zz\nclass Thing:\n    pass\n"})
    with pytest.raises(ModuleNotFoundError) as info:
        import_object("brokenmod.Thing")
    assert info.value.name == "no_such_dependency_zz"


def test_other_errors_inside_an_existing_module_propagate(modules) -> None:
    modules({"raisingmod.py": "raise RuntimeError('raised at import 42')\n"})
    with pytest.raises(RuntimeError, match="raised at import 42"):
        import_object("raisingmod.Thing")


def test_import_object_is_reexported_by_the_registry_package() -> None:
    assert reexported is import_object
