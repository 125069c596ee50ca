"""Registry statistics and the default-scope set-up of downstream packages (mmengine's
``mmengine.registry.utils``)."""

from __future__ import annotations

import datetime
import json
import os
import warnings
from typing import Any

from .default_scope import get_default_scope, set_default_scope
from .registry import Registry

# Scopes that init_default_scope has set once (mmengine: a DefaultScope instance of that name).
_initialised_scopes: set[str] = set()


def _folder(obj: Any) -> str:
    """The package folder a registered object's module lives in (``cadence/hooks``)."""
    module = getattr(obj, "__module__", None) or ""
    return "/".join(module.split(".")[:-1])


def traverse_registry_tree(registry: Registry, verbose: bool = True) -> list[dict[str, Any]]:
    """Count the registered objects of every registry in ``registry``'s tree.

    Walks the tree from its root, depth first. Each entry has ``num_modules`` and
    ``scope``, plus, per package folder (``'cadence/hooks'``), the names registered
    from it.
    """
    found: list[dict[str, Any]] = []
    stack = [registry.root]
    while stack:
        node = stack.pop()
        modules = node.module_dict
        info: dict[str, Any] = {"num_modules": len(modules), "scope": node.scope}
        for name, obj in modules.items():
            info.setdefault(_folder(obj), []).append(name)
        if verbose:
            print(f"Find {len(modules)} modules in {node.scope}'s '{node.name}' registry")
        found.append(info)
        stack.extend(reversed(list(node.children.values())))
    return found


def count_registered_modules(
    save_path: str | os.PathLike[str] | None = None, verbose: bool = True
) -> dict[str, Any]:
    """:func:`traverse_registry_tree` of every root registry, keyed by its name in
    :mod:`cadence.registry` (``'MODELS'``...), with the scan time.

    With ``save_path`` (a folder) the result is also written to
    ``<save_path>/modules_statistic_results.json``.
    """
    from . import root

    registries = {
        name: traverse_registry_tree(value, verbose)
        for name, value in sorted(vars(root).items())
        if isinstance(value, Registry) and not name.startswith("_")
    }
    scan = {
        "scan_date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"),
        "registries": registries,
    }
    if verbose:
        print(f"Finish registry analysis, got: {scan}")
    if save_path is not None:
        os.makedirs(save_path, exist_ok=True)
        path = os.path.join(save_path, "modules_statistic_results.json")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(scan, file, indent=2)
        if verbose:
            print(f"Result has been saved to {path}")
    return scan


def init_default_scope(scope: str) -> None:
    """Make ``scope`` the default registry scope, as a downstream package's
    ``register_all_modules`` does.

    Warns when this function set ``scope`` before and something has switched the
    default to another scope since (mmengine's rule).
    """
    current = get_default_scope()
    if scope in _initialised_scopes and current is not None and current != scope:
        warnings.warn(
            f'The current default scope "{current}" is not "{scope}"; init_default_scope '
            f'makes "{scope}" the default scope',
            stacklevel=2,
        )
    _initialised_scopes.add(scope)
    set_default_scope(scope)


__all__ = ["count_registered_modules", "init_default_scope", "traverse_registry_tree"]
