"""PixelData: pixel-level maps that share one height and width."""

from __future__ import annotations

import warnings
from typing import Any, TypeVar

import numpy as np
import torch

from .base_data_element import BaseDataElement

Pixels = TypeVar("Pixels", bound="PixelData")


class PixelData(BaseDataElement):
    """Pixel-level annotations or predictions: ``(C, H, W)`` tensors or arrays of one ``H, W``.

    A 2-D value ``(H, W)`` is stored as ``(1, H, W)`` (with a ``UserWarning``);
    other ranks, other types than tensor/ndarray, or another height and width
    than the element's raise ``AssertionError``. ``pixel_data[h, w]`` with ints
    or slices crops every field (an int keeps its dimension)::

        pix = PixelData(seg=torch.zeros(1, 20, 40))
        pix.shape                 # (20, 40)
        pix[10:20, 20:40].shape   # (10, 20)
        pix[10, 20].shape         # (1, 1)
    """

    def _check_data(self, name: str, value: Any) -> Any:
        if not isinstance(value, (torch.Tensor, np.ndarray)):
            raise AssertionError(
                f"Can not set {type(value)}, only support {(torch.Tensor, np.ndarray)}"
            )
        shape = self.shape
        if shape and tuple(value.shape[-2:]) != shape:
            raise AssertionError(
                f"The height and width of values {tuple(value.shape[-2:])} is not consistent "
                f"with the shape of this :obj:`PixelData` {shape}"
            )
        if value.ndim not in (2, 3):
            raise AssertionError(f"The dim of value must be 2 or 3, but got {value.ndim}")
        if value.ndim == 2:
            value = value[None]
            warnings.warn(
                f"PixelData field {name!r}: a 2-D value of shape {tuple(value.shape[1:])} "
                f"is stored as {tuple(value.shape)}",
                stacklevel=3,
            )
        return value

    def __getitem__(self: Pixels, item: tuple[int | slice, int | slice]) -> Pixels:
        """Every field cropped to rows ``item[0]`` and columns ``item[1]``."""
        if not isinstance(item, tuple):
            raise TypeError(f"Unsupported type {type(item)} for slicing PixelData")
        if len(item) != 2:
            raise AssertionError("Only support to slice height and width")
        shape = self.shape or (0, 0)
        crop: list[slice] = [slice(None)]
        for size, part in zip(shape, item):
            if isinstance(part, int):
                crop.append(slice(part, None, size))  # one row/column, dimension kept
            elif isinstance(part, slice):
                crop.append(part)
            else:
                raise TypeError(
                    f"The type of element in input must be int or slice, but got {type(part)}"
                )
        cropped = type(self)(metainfo=self.metainfo)
        for key, value in self.items():
            setattr(cropped, key, value[tuple(crop)])
        return cropped

    @property
    def shape(self) -> tuple[int, ...] | None:
        """``(H, W)`` of the fields, or None without fields."""
        values = self.values()
        return tuple(values[0].shape[-2:]) if values else None
