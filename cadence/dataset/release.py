"""Stop a loop's DataLoader worker processes when the call that started them returns.

A torch DataLoader iterator stops its workers when it is exhausted or freed. An iterator
that is neither (an iteration-based loop stops mid-epoch; a ``persistent_workers``
loader keeps its iterator) lives as long as the runner, which sits in reference cycles:
the garbage collector frees it at some later moment, and from there torch's shutdown
waits 5 s per worker (the collector finalised the queues it signals the workers
through first, so they never hear it) before it terminates them. Releasing them
explicitly ends the workers at once and frees their memory when training ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from torch.utils.data import DataLoader

#: Attributes through which loops and iterator wrappers reach torch's iterator.
_LINKS = ("_endless", "_it", "_batches", "dataloader", "dataloaders")


def release_workers(obj: Any) -> int:
    """Shut down the worker processes reachable from ``obj`` (a loop, a DataLoader or an
    iterator over one, through cadence's wrappers); return how many iterators were shut
    down. A DataLoader's persistent iterator is dropped, so its next ``iter()`` starts
    fresh workers."""
    released = 0
    seen: set[int] = set()
    stack = [obj]
    while stack:
        item = stack.pop()
        if item is None or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, DataLoader):
            iterator = item.__dict__.get("_iterator")
            if iterator is not None:
                item._iterator = None
                stack.append(iterator)
            continue
        shutdown = getattr(type(item), "_shutdown_workers", None)
        if callable(shutdown):
            shutdown(item)
            released += 1
            continue
        for name in _LINKS:
            linked = _attribute(item, name)
            if isinstance(linked, Mapping):
                stack.extend(linked.values())
            elif linked is not None:
                stack.append(linked)
    return released


def _attribute(item: Any, name: str) -> Any:
    """``item.<name>`` without running properties or ``__getattr__`` forwarding."""
    try:
        return object.__getattribute__(item, "__dict__").get(name)
    except AttributeError:  # a class with __slots__
        slot = getattr(type(item), name, None)
        return slot.__get__(item) if hasattr(slot, "__get__") and slot is not None else None
