"""InstanceData: per-instance fields of one length, indexed and concatenated together."""

from __future__ import annotations

import functools
import operator
from collections.abc import Sequence, Sized
from typing import Any, TypeVar

import numpy as np
import torch

from .base_data_element import BaseDataElement

#: What ``InstanceData[...]`` accepts: a field name, an int, a slice, a list or numpy
#: array of indices or booleans, or a 1-D long or bool tensor.
IndexType = str | slice | int | list[Any] | np.ndarray | torch.Tensor

Instances = TypeVar("Instances", bound="InstanceData")


def _is_bool(index: torch.Tensor) -> bool:
    return index.dtype == torch.bool


def _join(parts: Sequence[Any]) -> Any:
    """``parts[0] + parts[1] + ...`` (lists, tuples, strings)."""
    return functools.reduce(operator.add, parts[1:], parts[0][:])


def _pick(value: Any, positions: list[int]) -> Any:
    """``value``'s items at ``positions``, for lists, tuples, strings and ``cat``-able objects."""
    # a slice with step len(value) takes one item and keeps the type
    pieces = [value[slice(i, None, len(value))] for i in positions] or [value[slice(None, 0)]]
    return _join(pieces) if isinstance(value, (list, tuple, str)) else value.cat(pieces)


class InstanceData(BaseDataElement):
    """Instance-level annotations or predictions: every data field has the same length.

    Data values are tensors, numpy arrays, lists, tuples, strings or any object with
    ``__len__``, ``__getitem__`` and a ``cat(list)`` method. Assigning a value of
    another length than the element's raises ``AssertionError``; so does a value
    without ``__len__``. Indexing returns a new ``InstanceData`` with the same
    metainfo::

        inst = InstanceData(metainfo=dict(img_shape=(8, 8)))
        inst.scores = torch.tensor([0.8, 0.7])
        inst.labels = [3, 5]
        inst[inst.scores > 0.75].labels   # [3]
        inst[0].scores                    # tensor([0.8000]): an int keeps the dimension
        inst["scores"]                    # a string reads the field
        InstanceData.cat([inst, inst])    # 4 instances
    """

    def _check_data(self, name: str, value: Any) -> Any:
        if not isinstance(value, Sized):
            raise AssertionError("value must contain `__len__` attribute")
        length = len(self)
        if length > 0 and len(value) != length:
            raise AssertionError(
                f"The length of values {len(value)} is not consistent with the length of "
                f"this :obj:`InstanceData` {length}"
            )
        return value

    def __setitem__(self, name: str, value: Sized) -> None:
        setattr(self, name, value)

    def __len__(self) -> int:
        """The number of instances: the length of the first data field (0 without fields)."""
        values = self.values()
        return len(values[0]) if values else 0

    def __getitem__(self: Instances, item: IndexType) -> Instances:
        """The instances at ``item`` (or the field named ``item`` when it is a string)."""
        if isinstance(item, str):
            return getattr(self, item)
        index = self._as_index(item)
        picked = type(self)(metainfo=self.metainfo)
        if isinstance(index, slice):
            for key, value in self.items():
                picked[key] = value[index]
            return picked
        if index.dim() != 1:
            raise AssertionError("Only support to get the values along the first dimension.")
        if _is_bool(index) and len(index) != len(self):
            raise AssertionError(
                f"The shape of the input(BoolTensor) {len(index)} does not match the shape "
                f"of the indexed tensor in results_field {len(self)} at first dimension."
            )
        positions: list[int] | None = None
        for key, value in self.items():
            if isinstance(value, torch.Tensor):
                picked[key] = value[index]
            elif isinstance(value, np.ndarray):
                picked[key] = value[index.cpu().numpy()]
            elif isinstance(value, (list, tuple, str)) or (
                hasattr(value, "__getitem__") and hasattr(value, "cat")
            ):
                if positions is None:
                    flat = index.nonzero().view(-1) if _is_bool(index) else index
                    positions = flat.cpu().tolist()
                picked[key] = _pick(value, positions)
            else:
                raise ValueError(
                    f"The type of `{key}` is `{type(value)}`, which has no attribute of "
                    "`cat`, so it does not support slice with `bool`"
                )
        return picked

    def _as_index(self, item: Any) -> slice | torch.Tensor:
        """A slice or a 1-D long/bool tensor for ``item`` (``IndexError`` past the end)."""
        if isinstance(item, int):
            if item >= len(self) or item < -len(self):
                raise IndexError(f"Index {item} out of range!")
            return slice(item, None, len(self))  # one instance, dimension kept
        if isinstance(item, slice):
            return item
        if isinstance(item, list):
            item = np.array(item) if item else np.zeros(0, dtype=np.int64)
        if isinstance(item, np.ndarray):
            return torch.from_numpy(item.astype(np.int64) if item.dtype == np.int32 else item)
        if isinstance(item, torch.Tensor) and item.dtype in (torch.int64, torch.bool):
            return item
        raise AssertionError(
            f"InstanceData indices are str, int, slice, list, numpy arrays or long/bool "
            f"tensors, got {type(item).__name__}"
            + (f" of {item.dtype}" if isinstance(item, torch.Tensor) else "")
        )

    @staticmethod
    def cat(instances_list: Sequence[InstanceData]) -> InstanceData:
        """Concatenate elements with the same fields; metainfo comes from the first.

        A single element is returned as it is.
        """
        if not all(isinstance(each, InstanceData) for each in instances_list):
            raise AssertionError("cat expects a list of InstanceData")
        if len(instances_list) == 0:
            raise AssertionError("cat expects a non-empty list")
        if len(instances_list) == 1:
            return instances_list[0]
        first = instances_list[0]
        expected = set(first.all_keys())
        if any(
            len(each.all_keys()) != len(expected) or set(each.all_keys()) != expected
            for each in instances_list
        ):
            raise AssertionError(
                "There are different keys in `instances_list`, which may cause the cat "
                "operation to fail. Please make sure all elements in `instances_list` have "
                "the exact same key."
            )
        joined = type(first)(metainfo=first.metainfo)
        for key in first.keys():
            values = [each[key] for each in instances_list]
            head = values[0]
            if isinstance(head, torch.Tensor):
                joined[key] = torch.cat(values, dim=0)
            elif isinstance(head, np.ndarray):
                joined[key] = np.concatenate(values, axis=0)
            elif isinstance(head, (list, tuple, str)):
                joined[key] = _join(values)
            elif hasattr(head, "cat"):
                joined[key] = head.cat(values)
            else:
                raise ValueError(
                    f"The type of `{key}` is `{type(head)}` which has no attribute of `cat`"
                )
        return joined
