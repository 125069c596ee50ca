"""Import objects by dotted path."""

from __future__ import annotations

import importlib
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
