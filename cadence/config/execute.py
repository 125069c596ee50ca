"""Running a config file's code: shared by the classic loader and pure-Python configs.

Both :mod:`cadence.config.loader` and :mod:`cadence.config.pure` import this module;
neither imports the other's helpers, so the two stay free of an import cycle.
"""

from __future__ import annotations

import ast
import types
from collections.abc import Set as AbstractSet
from typing import Any

from ..utils.suggest import did_you_mean
from .errors import ConfigError


def import_bound_names(tree: ast.Module) -> set[str]:
    """Names bound at the top level of ``tree`` by imports, ``def`` and ``class``."""
    names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(stmt.name)
    return names


def is_config_value(key: str, value: Any, skip: AbstractSet[str]) -> bool:
    """Whether a name left by running a config file belongs in the config."""
    return not (
        key.startswith("__")
        or key in skip
        or isinstance(value, (types.FunctionType, types.ModuleType, types.BuiltinFunctionType))
    )


def run_config_code(code: Any, path: str, namespace: dict[str, Any]) -> None:
    """Execute a config's code (or tree); errors name the file and line that failed."""
    if isinstance(code, ast.Module):
        code = compile(code, path, "exec")
    try:
        exec(code, namespace)
    except ConfigError:
        raise
    except Exception as exc:
        line = None
        tb = exc.__traceback__
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == path:
                line = tb.tb_lineno
            tb = tb.tb_next
        hint = ""
        if isinstance(exc, (NameError, AttributeError)) and "_base_" in str(exc):
            hint = " (values of base files are read as _base_.key after _base_ = [...])"
        elif isinstance(exc, NameError):
            hint = did_you_mean(exc.name or "", [k for k in namespace if not k.startswith("__")])
        raise ConfigError(f"{type(exc).__name__}: {exc}{hint}", filename=path, line=line) from exc
