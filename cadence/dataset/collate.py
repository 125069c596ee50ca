"""Collate functions: turn a list of samples into a batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from ..registry import FUNCTIONS


def _check_equal_lengths(batch: Sequence[Sequence[Any]]) -> None:
    lengths = {len(item) for item in batch}
    if len(lengths) > 1:
        raise ValueError(f"every sample must have the same number of fields, got lengths {lengths}")


@FUNCTIONS.register_module()
def pseudo_collate(data_batch: Sequence[Any]) -> Any:
    """Transpose a list of samples into one structure of lists, without stacking.

    ``[dict(x=a1, y=b1), dict(x=a2, y=b2)]`` → ``dict(x=[a1, a2], y=[b1, b2])``;
    tuples and lists are transposed the same way; leaves stay as lists.
    """
    first: Any = data_batch[0]
    cls: Any = type(first)
    if isinstance(first, (str, bytes)):
        return list(data_batch)
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return cls(*(pseudo_collate(list(s)) for s in zip(*data_batch)))
    if isinstance(first, Mapping):
        return cls({key: pseudo_collate([d[key] for d in data_batch]) for key in first})
    if isinstance(first, Sequence):
        _check_equal_lengths(data_batch)
        transposed = [pseudo_collate(list(s)) for s in zip(*data_batch)]
        if isinstance(first, tuple):
            return transposed
        try:
            return cls(transposed)
        except TypeError:
            return transposed
    return list(data_batch)


@FUNCTIONS.register_module()
def default_collate(data_batch: Sequence[Any]) -> Any:
    """Like :func:`pseudo_collate` but stack tensors, arrays and numbers into tensors.

    Strings, bytes and other objects (e.g. data samples) are kept as lists.
    """
    first: Any = data_batch[0]
    cls: Any = type(first)
    if isinstance(first, torch.Tensor):
        return torch.stack(list(data_batch))
    if isinstance(first, np.ndarray):
        return torch.stack([torch.as_tensor(a) for a in data_batch])
    if isinstance(first, float):
        return torch.tensor(list(data_batch), dtype=torch.float64)  # as torch's default_collate
    if isinstance(first, (bool, int, np.number)):
        return torch.tensor(list(data_batch))
    if isinstance(first, (str, bytes)):
        return list(data_batch)
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return cls(*(default_collate(list(s)) for s in zip(*data_batch)))
    if isinstance(first, Mapping):
        return cls({key: default_collate([d[key] for d in data_batch]) for key in first})
    if isinstance(first, Sequence):
        _check_equal_lengths(data_batch)
        transposed = [default_collate(list(s)) for s in zip(*data_batch)]
        if isinstance(first, tuple):
            return transposed
        try:
            return cls(transposed)
        except TypeError:
            return transposed
    return list(data_batch)
