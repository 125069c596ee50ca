"""``cadence list [REGISTRY]``: what is registered, and the module each name comes from."""

from __future__ import annotations

import argparse
from typing import Any

from .common import CliError, load_config


def add_list_command(sub: Any) -> None:
    """Register ``list`` on the ``cadence`` parser."""
    parser = sub.add_parser(
        "list",
        help="list registered names (models, hooks, ...) and their modules",
        description="List what is registered in cadence's registries (after importing "
        "cadence's built-ins and, with --config, the config's custom_imports).",
    )
    parser.add_argument(
        "registry",
        nargs="?",
        help="one registry, e.g. model, hook, METRICS, 'data sampler' (default: all)",
    )
    parser.add_argument("--scope", help="only the registry of this scope (e.g. mmdet)")
    parser.add_argument("--config", help="import this config's custom_imports first")
    parser.set_defaults(func=_list)


def registry_aliases() -> dict[str, Any]:
    """Every spelling that names a root registry: ``'model'``, ``'models'``, ``'MODELS'``."""
    from .. import registry as reg

    aliases: dict[str, Any] = {}
    for constant in reg.__all__:
        obj = getattr(reg, constant)
        if isinstance(obj, reg.Registry):
            aliases[_normal(constant)] = obj
            aliases[_normal(obj.name)] = obj
    return aliases


def _normal(name: str) -> str:
    return name.lower().replace(" ", "_").replace("-", "_")


def find_registry(name: str) -> Any:
    """The root registry called ``name`` (any spelling of :func:`registry_aliases`)."""
    from ..utils import did_you_mean

    aliases = registry_aliases()
    found = aliases.get(_normal(name))
    if found is None:
        names = sorted({r.name.replace(" ", "_") for r in aliases.values()})
        raise CliError(
            f"no registry called '{name}'.{did_you_mean(_normal(name), names)} "
            f"Registries: {', '.join(names)}"
        )
    return found


def _scoped(registry: Any, scope: str) -> Any:
    from ..utils import did_you_mean

    found = registry._registry_for_scope(scope)
    if found is None:
        scopes = sorted(registry._all_scopes())
        raise CliError(
            f"registry '{registry.name}' has no scope '{scope}'; known scopes: "
            f"{', '.join(scopes)}.{did_you_mean(scope, scopes)}"
        )
    return found


def _tree(registry: Any) -> list[Any]:
    """``registry`` and its descendants, parents first."""
    nodes, stack = [], [registry]
    while stack:
        node = stack.pop()
        nodes.append(node)
        stack.extend(reversed(list(node.children.values())))
    return nodes


def format_registry(registry: Any) -> list[str]:
    """Lines listing one registry (locations imported): name, then where it lives."""
    from ..utils.imports import describe_object

    entries = sorted(registry.module_dict.items())
    lines = [f"{registry.name} (scope '{registry.scope}'): {len(entries)} registered"]
    width = max((len(name) for name, _ in entries), default=0)
    lines.extend(f"  {name:<{width}}  {describe_object(obj)}" for name, obj in entries)
    return lines


def _list(args: argparse.Namespace) -> int:
    from ..registry import ROOT_REGISTRIES

    if args.config:
        load_config(args.config)  # imports its custom_imports
    roots = [find_registry(args.registry)] if args.registry else list(ROOT_REGISTRIES)
    blocks: list[str] = []
    for root in roots:
        nodes = [_scoped(root, args.scope)] if args.scope else _tree(root)
        blocks.extend("\n".join(format_registry(node)) for node in nodes)
    print("\n\n".join(blocks))
    return 0
