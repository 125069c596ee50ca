"""Keep registrations made inside a block from leaking out of it (for tests)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from .default_scope import isolated_default_scope
from .registry import Registry
from .root import ROOT_REGISTRIES


def _tree(registries: Iterable[Registry]) -> list[Registry]:
    seen: dict[int, Registry] = {}
    stack = list(registries)
    while stack:
        node = stack.pop()
        if id(node) not in seen:
            seen[id(node)] = node
            stack.extend(node.children.values())
    return list(seen.values())


@contextmanager
def isolated_registries(*registries: Registry) -> Iterator[None]:
    """Restore the given registries (default: every root tree) and the default scope.

    Registrations, new child registries and default-scope changes made inside
    the block are undone on exit. Built-in locations are imported first, so a
    module imported inside the block does not leave its registry empty later.
    """
    nodes = _tree(registries or ROOT_REGISTRIES)
    for node in nodes:
        node.import_from_location()
    snapshots = [(node, node._snapshot()) for node in nodes]
    try:
        with isolated_default_scope():
            yield
    finally:
        for node, snap in snapshots:
            node._restore(snap)
