"""Import objects by dotted path."""

from __future__ import annotations

import importlib
import inspect
import warnings
from typing import Any


def import_object(path: str) -> Any:
    """Import ``'pkg.module.Name'`` (attributes may nest) and return it, or ``None``.

    The longest importable module prefix is imported and the rest is looked up
    as attributes. Errors raised inside an existing module propagate.
    """
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj: Any = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
                continue
            raise
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


def describe_object(obj: Any) -> str:
    """``'package.module.QualName'`` for a class or function, else its repr."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(module, str) and isinstance(qualname, str):
        return f"{module}.{qualname}"
    return repr(obj)


def import_modules_from_strings(
    imports: str | list[str] | None, allow_failed_imports: bool = False
) -> Any:
    """Import the named modules: one module for a str, a list for a list, ``None`` for nothing.

    A module that fails to import raises ``ImportError`` naming it, or with
    ``allow_failed_imports=True`` warns and gives ``None`` in its place.
    """
    if not imports:
        return None
    single = isinstance(imports, str)
    names = [imports] if isinstance(imports, str) else imports
    if not isinstance(names, list):
        raise TypeError(f"custom_imports must be a list but got type {type(names)}")
    modules: list[Any] = []
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{name!r} is of type {type(name)} and cannot be imported.")
        try:
            modules.append(importlib.import_module(name))
        except ImportError as exc:
            if not allow_failed_imports:
                raise ImportError(f"Failed to import {name}: {exc}") from exc
            warnings.warn(f"{name} failed to import and is ignored.", UserWarning, stacklevel=2)
            modules.append(None)
    return modules[0] if single else modules


def get_object_from_string(obj_name: str) -> Any:
    """The module, class or attribute at dotted path ``obj_name``, or ``None`` if there is none.

    Unlike :func:`import_object`, a name that is both a submodule and an attribute
    of its package resolves to the attribute (``'pkg.nms'`` is the function when
    ``pkg`` defines one, even if ``pkg/nms.py`` exists).
    """
    parts = obj_name.split(".")
    try:
        obj: Any = importlib.import_module(parts[0])
    except ImportError:
        return None
    for i, part in enumerate(parts[1:], start=1):
        attr = getattr(obj, part, None)
        if attr is not None and (not inspect.ismodule(attr) or i == len(parts) - 1):
            obj = attr
            continue
        if not inspect.ismodule(obj):
            return None
        try:
            obj = importlib.import_module(".".join(parts[: i + 1]))
        except ImportError:
            return None
    return obj
