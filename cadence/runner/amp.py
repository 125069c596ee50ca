"""``autocast``: mixed-precision context for the current device, mmengine's defaults."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

from ..device import get_device


@contextmanager
def autocast(
    device_type: str | None = None,
    dtype: torch.dtype | None = None,
    enabled: bool = True,
    cache_enabled: bool | None = None,
) -> Iterator[None]:
    """``torch.autocast`` on ``device_type`` (default: the current device).

    As mmengine: CUDA defaults to torch's autocast GPU dtype, CPU to bfloat16 (the only
    dtype accepted there); an unknown device type is an error unless ``enabled=False``.
    """
    if cache_enabled is None:
        cache_enabled = torch.is_autocast_cache_enabled()
    device_type = get_device() if device_type is None else device_type
    if device_type == "cuda":
        if dtype is None:
            dtype = torch.get_autocast_dtype("cuda")
        if dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():
            raise RuntimeError("this CUDA device does not support bfloat16; use float16")
    elif device_type == "cpu":
        dtype = torch.bfloat16 if dtype is None else dtype
        if dtype != torch.bfloat16:
            raise ValueError(f"CPU autocast supports only torch.bfloat16, got {dtype}")
    elif device_type not in ("mlu", "npu"):
        if not enabled:
            yield
            return
        raise ValueError(
            f"User specified autocast device_type must be 'cuda' or 'cpu', got {device_type!r}"
        )
    with torch.autocast(
        device_type=device_type, enabled=enabled, dtype=dtype, cache_enabled=cache_enabled
    ):
        yield


__all__ = ["autocast"]
