"""Which device tensors in (nested) containers live on, and moving them elsewhere."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import torch


def _items(data: Any, kinds: str = "sequence of tensor") -> Iterable[Any]:
    if isinstance(data, Mapping):
        return data.values()
    if isinstance(data, Iterable) and not isinstance(data, (str, bytes, np.ndarray)):
        return data
    raise TypeError(  # mmengine's wording (its two functions differ), then cadence's
        f"data should be a Tensor, {kinds} or dict: a Tensor or a list/tuple/dict of tensors "
        f"(nested), got {type(data).__name__}"
    )


def get_data_device(data: Any) -> torch.device:
    """The device of ``data``: a tensor, or a list/tuple/dict (nested) of tensors.

    Raises ``ValueError`` when the tensors are on different devices or there is
    no tensor at all, ``TypeError`` for anything else.
    """
    if isinstance(data, torch.Tensor):
        return data.device
    found: torch.device | None = None
    for item in _items(data):
        device = get_data_device(item)
        if found is not None and device != found:
            raise ValueError(f"the tensors of data are on different devices: {found} and {device}")
        found = device
    if found is None:
        raise ValueError("data holds no tensor to take the device from (it is empty)")
    return found


def cast_data_device(data: Any, device: torch.device | str, out: Any = None) -> Any:
    """Return ``data`` with every tensor moved to ``device`` (a tensor already there is kept).

    ``data`` is a tensor or a (nested) list/tuple/dict of tensors; containers keep
    their type. With ``out`` (the same structure as ``data``), the moved values are
    also copied into ``out``'s tensors in place.
    """
    device = torch.device(device)
    if out is not None:
        if type(out) is not type(data):
            raise TypeError(
                f"out must have the type of data ({type(data).__name__}), got {type(out).__name__}"
            )
        if isinstance(out, (set, frozenset)):
            raise TypeError("out cannot be a set: its items have no order to copy into")
    if isinstance(data, torch.Tensor):
        moved = data if data.device == device else data.to(device)
        if out is not None:
            out.copy_(moved)
        return moved
    if isinstance(data, Mapping):
        if out is not None and len(out) != len(data):
            raise ValueError(f"data and out differ in length: {len(data)} and {len(out)}")
        casted = {
            key: cast_data_device(value, device, None if out is None else out[key])
            for key, value in data.items()
        }
        if not casted:
            raise ValueError("data is empty")
        return type(data)(casted)  # type: ignore[call-arg]
    items = list(_items(data, "list of tensor"))
    outs = [None] * len(items) if out is None else list(out)
    if len(outs) != len(items):
        raise ValueError(f"data and out differ in length: {len(items)} and {len(outs)}")
    if not items:
        raise ValueError("data is empty")
    return type(data)(cast_data_device(v, device, o) for v, o in zip(items, outs))
