"""Writing a config back out: Python source, JSON or YAML.

A Python dump loads back (``Config.fromfile``) into an equal config: classes,
functions and lazy imports are written as imports at the top of the file. Its layout
is cadence's own, in one linear pass: a value that fits in :data:`COLUMNS` stays on
one line, a longer container is split one item per line (mmengine runs yapf over the
text, 0.1-0.5 s of every run's start; the values are the same).
"""

from __future__ import annotations

import json
import keyword
import math
from collections.abc import Mapping
from typing import Any

from ..utils.imports import import_object
from .config_dict import raw_items
from .errors import ConfigError
from .lazy import LazyObject

#: the width a dumped line keeps within where it can (a long string cannot)
COLUMNS = 100


class _Imports:
    """Collects the imports a dumped file needs, choosing non-clashing names."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)
        self.by_path: dict[str, str] = {}
        self.lines: list[str] = []

    def name_for(self, dotted: str) -> str:
        if dotted in self.by_path:
            return self.by_path[dotted]
        module, _, attr = dotted.rpartition(".")
        base = attr or dotted
        name, n = base, 1
        while name in self.taken or keyword.iskeyword(name):
            name, n = f"{base}_{n}", n + 1
        self.taken.add(name)
        self.by_path[dotted] = name
        if not module:
            self.lines.append(f"import {dotted}" + (f" as {name}" if name != dotted else ""))
        else:
            alias = f" as {name}" if name != attr else ""
            self.lines.append(f"from {module} import {attr}{alias}")
        return name


def _object_path(value: Any) -> str | None:
    module = getattr(value, "__module__", None)
    qualname = getattr(value, "__qualname__", None)
    if module and qualname and "<" not in qualname:
        path = f"{module}.{qualname}"
        return path if import_object(path) is value else None
    text = repr(value)
    if text.replace(".", "").replace("_", "").isalnum() and "." in text:
        try:
            if import_object(text) is value:
                return text
        except ImportError:
            return None
    return None


def _is_identifier(key: Any) -> bool:
    return isinstance(key, str) and key.isidentifier() and not keyword.iskeyword(key)


def _format(value: Any, imports: _Imports, path: str) -> str:
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return repr(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return repr(value)
        if "float" not in imports.taken:
            return f"float('{value}')"
        return "(1e999 - 1e999)" if math.isnan(value) else ("-1e999" if value < 0 else "1e999")
    if isinstance(value, LazyObject):
        return imports.name_for(value.dotted_path)
    if isinstance(value, Mapping):
        items = raw_items(value)
        if "dict" not in imports.taken and all(_is_identifier(k) for k, _ in items):
            body = ", ".join(f"{k}={_format(v, imports, f'{path}.{k}')}" for k, v in items)
            return f"dict({body})"
        body = ", ".join(
            f"{_format(k, imports, path)}: {_format(v, imports, f'{path}.{k}')}" for k, v in items
        )
        return "{" + body + "}"
    if isinstance(value, (list, tuple)):
        parts = [_format(v, imports, f"{path}.{i}") for i, v in enumerate(value)]
        if isinstance(value, list):
            return "[" + ", ".join(parts) + "]"
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if isinstance(value, (set, frozenset)):
        parts = sorted(_format(v, imports, path) for v in value)
        inner = "{" + ", ".join(parts) + "}" if parts else "()"
        return inner if isinstance(value, set) and parts else f"{type(value).__name__}({inner})"
    dotted = _object_path(value)
    if dotted is not None:
        return imports.name_for(dotted)
    raise ConfigError(
        f"cannot write a {type(value).__name__} ({value!r}) as Python source; "
        "use plain values, or classes/functions importable by name",
        key=path,
    )


def format_python(cfg: Mapping[str, Any], *, format_code: bool = True) -> str:
    """Return Python source that defines every top-level key of ``cfg``."""
    bad = [k for k in cfg if not _is_identifier(k)]
    if bad:
        raise ConfigError(
            f"top-level key(s) {', '.join(map(repr, bad))} are not Python identifiers, so the "
            "config cannot be written as a .py file; dump it as .json or .yaml",
        )
    imports = _Imports(set(cfg))
    if format_code:
        body = [f"{k} = {_layout(v, imports, k, len(k) + 3, 0)}" for k, v in raw_items(cfg)]
    else:
        body = [f"{key} = {_format(value, imports, key)}" for key, value in raw_items(cfg)]
    header = sorted(imports.lines)
    return ("\n".join(header) + "\n\n" if header else "") + "\n".join(body) + "\n"


def _layout(value: Any, imports: _Imports, path: str, column: int, indent: int) -> str:
    """``value`` as source starting at ``column``: on one line where it fits in
    :data:`COLUMNS`, else a container split one item per line, indented from ``indent``."""
    line = _format(value, imports, path)
    if column + len(line) <= COLUMNS:
        return line
    inner = indent + 4
    pad = " " * inner
    items: list[str]
    if isinstance(value, Mapping):
        pairs = raw_items(value)
        if "dict" not in imports.taken and all(_is_identifier(k) for k, _ in pairs):
            items = [
                f"{k}=" + _layout(v, imports, f"{path}.{k}", inner + len(k) + 1, inner)
                for k, v in pairs
            ]
            opening, closing = "dict(", ")"
        else:
            items = []
            for k, v in pairs:
                key = _format(k, imports, path)
                text = _layout(v, imports, f"{path}.{k}", inner + len(key) + 2, inner)
                items.append(f"{key}: {text}")
            opening, closing = "{", "}"
    elif isinstance(value, (list, tuple)) and value:
        items = [_layout(v, imports, f"{path}.{i}", inner, inner) for i, v in enumerate(value)]
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
    else:  # a scalar, a set or an import name: nothing to split
        return line
    if not items:
        return line
    body = "".join(f"{pad}{item},\n" for item in items)
    return f"{opening}\n{body}{' ' * indent}{closing}"


def to_serializable(value: Any, path: str = "") -> Any:
    """Plain JSON-able data: lazy imports and classes become dotted-path strings."""
    if isinstance(value, dict):
        return {
            k: to_serializable(v, f"{path}.{k}" if path else str(k)) for k, v in raw_items(value)
        }
    if isinstance(value, (list, tuple)):
        items = [to_serializable(v, f"{path}.{i}") for i, v in enumerate(value)]
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, LazyObject):
        return value.dotted_path
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    dotted = _object_path(value)
    if dotted is not None:
        return dotted
    raise ConfigError(f"cannot serialize a {type(value).__name__} ({value!r})", key=path or None)


def format_json(cfg: Mapping[str, Any]) -> str:
    """Return the config as indented JSON (tuples become lists)."""
    return json.dumps(to_serializable(dict(raw_items(cfg))), indent=4, ensure_ascii=False) + "\n"


def format_yaml(cfg: Mapping[str, Any]) -> str:
    """Return the config as YAML (tuples kept with ``!!python/tuple``)."""
    from .yaml_io import dump_yaml

    return dump_yaml(to_serializable(dict(raw_items(cfg))))
