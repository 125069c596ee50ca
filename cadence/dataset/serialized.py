"""A list of dicts pickled into one numpy byte buffer plus an array of end offsets.

DataLoader workers forked from the main process share such a buffer copy-on-write:
reading an item touches no Python object's reference count, so no page is copied
(a list of dicts would be copied page by page as workers touch its objects).
The layout is mmengine's: ``address[i]`` is where item ``i`` ends in ``buffer``.
"""

from __future__ import annotations

import operator
import pickle
from collections.abc import Sequence
from typing import Any

import numpy as np


def serialize(items: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(buffer, address)``: the pickled items back to back and their end offsets."""
    pickled = [np.frombuffer(pickle.dumps(item, protocol=4), dtype=np.uint8) for item in items]
    address = np.cumsum([len(p) for p in pickled], dtype=np.int64)
    buffer = np.concatenate(pickled) if pickled else np.zeros(0, dtype=np.uint8)
    return buffer, address


def _bounds(address: np.ndarray, index: int) -> tuple[int, int]:
    start = int(address[index - 1]) if index > 0 else 0
    return start, int(address[index])


def normalize_index(index: Any, length: int) -> int:
    """``index`` as a position in ``range(length)`` (negative ones count from the end)."""
    position = operator.index(index)
    if not -length <= position < length:
        raise IndexError(f"index {index} is out of range for {length} items")
    return position + length if position < 0 else position


def deserialize(buffer: np.ndarray, address: np.ndarray, index: int) -> Any:
    """Item ``index`` (non-negative) of the serialized list."""
    start, end = _bounds(address, index)
    return pickle.loads(buffer[start:end].data)


def subset_positions(indices: Any, length: int) -> list[int] | slice:
    """The items ``indices`` selects: an int ``n`` the first ``n`` (the last ``-n`` if
    negative), a sequence of ints those positions, in that order."""
    if isinstance(indices, (int, np.integer)) and not isinstance(indices, bool):
        count = int(indices)
        return slice(0, min(count, length)) if count >= 0 else slice(max(length + count, 0), length)
    if isinstance(indices, (Sequence, np.ndarray)) and not isinstance(indices, str):
        return [normalize_index(i, length) for i in indices]
    raise TypeError(f"indices must be an int or a sequence of ints, got {type(indices).__name__}")


def serialized_subset(
    buffer: np.ndarray, address: np.ndarray, indices: Any
) -> tuple[np.ndarray, np.ndarray]:
    """``(buffer, address)`` of the items ``indices`` selects (see :func:`subset_positions`).

    A leading or trailing run (an int) is a view of ``buffer``; a sequence is copied.
    """
    chosen = subset_positions(indices, len(address))
    if isinstance(chosen, slice):
        if chosen.start >= chosen.stop:
            return buffer[:0], address[:0].copy()
        start = _bounds(address, chosen.start)[0]
        end = int(address[chosen.stop - 1])
        return buffer[start:end], address[chosen] - start
    pieces = [buffer[slice(*_bounds(address, i))] for i in chosen]
    sizes = np.asarray([len(p) for p in pieces], dtype=np.int64)
    joined = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.uint8)
    return joined, np.cumsum(sizes, dtype=np.int64)
