"""Collate functions: turn a list of samples into a batch."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ..registry import FUNCTIONS

_NOT_A_LEAF = object()
Leaf = Callable[[Sequence[Any]], Any]


def _collate(data_batch: Sequence[Any], leaf: Leaf) -> Any:
    """Transpose containers recursively; ``leaf`` may turn a batch of leaves into one value."""
    stacked = leaf(data_batch)
    if stacked is not _NOT_A_LEAF:
        return stacked
    first: Any = data_batch[0]
    cls: Any = type(first)
    if isinstance(first, (str, bytes)):
        return list(data_batch)
    if isinstance(first, tuple) and hasattr(first, "_fields"):  # namedtuple
        return cls(*(_collate(list(s), leaf) for s in zip(*data_batch)))
    if isinstance(first, Mapping):
        return cls({key: _collate([d[key] for d in data_batch], leaf) for key in first})
    if isinstance(first, Sequence):
        lengths = {len(item) for item in data_batch}
        if len(lengths) > 1:
            raise ValueError(f"every sample must have the same number of fields, got {lengths}")
        transposed = [_collate(list(s), leaf) for s in zip(*data_batch)]
        if isinstance(first, tuple):
            return transposed
        try:
            return cls(transposed)
        except TypeError:
            return transposed
    return list(data_batch)


def _keep(data_batch: Sequence[Any]) -> Any:
    return _NOT_A_LEAF


def _stack(data_batch: Sequence[Any]) -> Any:
    first = data_batch[0]
    if isinstance(first, torch.Tensor):
        return torch.stack(list(data_batch))
    if isinstance(first, np.ndarray):
        return torch.stack([torch.as_tensor(a) for a in data_batch])
    if isinstance(first, float):
        return torch.tensor(list(data_batch), dtype=torch.float64)  # as torch's default_collate
    if isinstance(first, (bool, int, np.number)):
        return torch.tensor(list(data_batch))
    return _NOT_A_LEAF


@FUNCTIONS.register_module()
def pseudo_collate(data_batch: Sequence[Any]) -> Any:
    """Transpose a list of samples into one structure of lists, without stacking.

    ``[dict(x=a1, y=b1), dict(x=a2, y=b2)]`` → ``dict(x=[a1, a2], y=[b1, b2])``;
    tuples and lists are transposed the same way; leaves stay as lists.
    """
    return _collate(data_batch, _keep)


@FUNCTIONS.register_module()
def default_collate(data_batch: Sequence[Any]) -> Any:
    """Like :func:`pseudo_collate` but stack tensors, arrays and numbers into tensors.

    Strings, bytes and other objects (e.g. data samples) are kept as lists.
    """
    return _collate(data_batch, _stack)
