"""Merging a child config into its base, with the OpenMMLab rules.

Dicts merge key by key; ``_delete_=True`` in a child dict replaces the base
value instead; lists and scalars are replaced, not merged; with
``allow_list_keys`` a digit key (``'0'``) addresses a list element.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..utils.suggest import did_you_mean
from .config_dict import DELETE_KEY, ConfigDict
from .errors import ConfigKeyError, ConfigTypeError
from .provenance import Path, join_key

OnReplace = Callable[[Path], None]


def strip_delete_keys(value: Any) -> Any:
    """Return ``value`` with every ``_delete_`` key removed (dicts become ConfigDicts)."""
    if isinstance(value, dict):
        return ConfigDict(
            {k: strip_delete_keys(v) for k, v in dict.items(value) if k != DELETE_KEY}
        )
    if isinstance(value, list):
        return [strip_delete_keys(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(strip_delete_keys(v) for v in value)
    return value


def merge_a_into_b(
    a: Mapping[Any, Any],
    b: Any,
    *,
    allow_list_keys: bool = False,
    path: Path = (),
    on_replace: OnReplace | None = None,
    filename: str | None = None,
) -> Any:
    """Return a copy of ``b`` (dict, or list with ``allow_list_keys``) with ``a`` merged in.

    ``on_replace(path)`` is called for each existing subtree that ``a`` replaces
    rather than merges into (used to keep provenance honest).
    """
    merged: Any = (
        list(b)
        if isinstance(b, list)
        else ConfigDict.__copy__(b)
        if isinstance(b, ConfigDict)
        else ConfigDict(b)
    )
    for key, value in a.items():
        key_path = (*path, str(key))
        if isinstance(merged, list):
            merged = _merge_into_list(
                merged, key, value, key_path, allow_list_keys, on_replace, filename
            )
            continue
        if isinstance(value, dict):
            value = dict(dict.items(value))
            delete = bool(value.pop(DELETE_KEY, False))
            current = dict.get(merged, key)
            # None in a base means "unset": a child dict simply replaces it.
            if key in merged and not delete and current is not None:
                allowed: tuple[type, ...] = (dict, list) if allow_list_keys else (dict,)
                if not isinstance(current, allowed):
                    raise ConfigTypeError(
                        f"is a dict in the child config but a {type(current).__name__} "
                        f"({current!r}) in its base; set _delete_=True in the child dict "
                        "to replace it",
                        key=join_key(key_path),
                        filename=filename,
                    )
                merged[key] = merge_a_into_b(
                    value,
                    current,
                    allow_list_keys=allow_list_keys,
                    path=key_path,
                    on_replace=on_replace,
                    filename=filename,
                )
                continue
        if key in merged and on_replace is not None:
            on_replace(key_path)
        merged[key] = strip_delete_keys(value)
    return merged


def _merge_into_list(
    target: list[Any],
    key: Any,
    value: Any,
    key_path: Path,
    allow_list_keys: bool,
    on_replace: OnReplace | None,
    filename: str | None,
) -> list[Any]:
    if not (allow_list_keys and isinstance(key, str) and key.isdigit()):
        raise ConfigTypeError(
            f"cannot set key '{key}' inside a list; address list elements by index "
            "(e.g. 'pipeline.0.type')",
            key=join_key(key_path),
            filename=filename,
        )
    index = int(key)
    if index >= len(target):
        raise ConfigKeyError(
            f"index {index} is out of range for a list of length {len(target)}",
            key=join_key(key_path),
            filename=filename,
        )
    current = target[index]
    if isinstance(value, dict) and isinstance(current, (dict, list)):
        value = dict(dict.items(value))
        if not value.pop(DELETE_KEY, False):
            target[index] = merge_a_into_b(
                value,
                current,
                allow_list_keys=True,
                path=key_path,
                on_replace=on_replace,
                filename=filename,
            )
            return target
    if on_replace is not None:
        on_replace(key_path)
    target[index] = strip_delete_keys(value)
    return target


def get_by_path(root: Any, path: Path, *, what: str = "config") -> Any:
    """Follow ``path`` through dicts and lists; raise ``ConfigKeyError`` with hints."""
    node = root
    for depth, key in enumerate(path):
        here = join_key(path[:depth]) or what
        if isinstance(node, dict):
            if key not in node:
                raise ConfigKeyError(
                    f"'{here}' has no key '{key}'.{did_you_mean(key, node.keys())}",
                    key=join_key(path),
                )
            node = dict.__getitem__(node, key)
        elif isinstance(node, (list, tuple)) and key.lstrip("-").isdigit():
            try:
                node = node[int(key)]
            except IndexError:
                raise ConfigKeyError(
                    f"index {key} is out of range for '{here}' of length {len(node)}",
                    key=join_key(path),
                ) from None
        else:
            raise ConfigKeyError(
                f"'{here}' is a {type(node).__name__}, not a dict", key=join_key(path)
            )
    return node
