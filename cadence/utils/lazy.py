"""Packages whose names are imported on first use (PEP 562), so importing one submodule
does not import its siblings."""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose public names are ``exports``
    (name -> submodule, relative like ``".logger_hook"``). The first read of a name
    imports its submodule and keeps the value in the package's namespace."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value  # later reads skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__


def load_all(module: Any) -> None:
    """Import every lazily exported name of ``module`` (a no-op for an ordinary module)."""
    exports = getattr(module, "LAZY_EXPORTS", None)
    if isinstance(exports, Mapping):
        for name in exports:
            getattr(module, name)


def export_module(module: Any, name: str) -> str | None:
    """The absolute name of the submodule that defines lazily exported ``name``, or None."""
    exports = getattr(module, "LAZY_EXPORTS", None)
    target = exports.get(name) if isinstance(exports, Mapping) else None
    if target is None:
        return None
    return importlib.util.resolve_name(target, module.__name__)
