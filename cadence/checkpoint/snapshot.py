"""Copies of a run's state for writing in the background."""

from __future__ import annotations

import os
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import torch

_SCALARS = frozenset({type(None), bool, int, float, str, bytes})
_PARALLEL_COPY_BYTES = 4 << 20


class Snapshot:
    """Copies a nested state to CPU, reusing the buffers of the previous copy.

    An asynchronous save must own its tensors (training keeps changing the
    live ones). Allocating ~100 MB each time costs page faults; when the state
    has the same tensor shapes as last time the copy goes into those buffers,
    so :meth:`take` overwrites the previous copy: call it only once that copy
    has been written.
    """

    def __init__(self, workers: int | None = None) -> None:
        self._buffers: list[torch.Tensor] = []
        self._pending: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.workers = workers or min(4, os.cpu_count() or 1)

    def take(self, state: Any) -> Any:
        """A deep copy of ``state`` whose tensors live on the CPU."""
        old, self._buffers = self._buffers, []
        copied = self._copy(state, iter(old))
        pending, self._pending = self._pending, []
        self._copy_all(pending)
        return copied

    def _copy_all(self, pending: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        """Copy the large tensors on a few threads (``copy_`` releases the GIL)."""
        large = [p for p in pending if p[0].numel() * p[0].element_size() >= _PARALLEL_COPY_BYTES]
        for buffer, source in pending:
            if buffer.numel() * buffer.element_size() < _PARALLEL_COPY_BYTES:
                buffer.copy_(source)
        if self.workers <= 1 or len(large) <= 1:
            for buffer, source in large:
                buffer.copy_(source)
            return
        with ThreadPoolExecutor(self.workers) as pool:
            list(pool.map(lambda pair: pair[0].copy_(pair[1]), large))

    def _copy(self, obj: Any, old: Any) -> Any:
        if isinstance(obj, torch.Tensor):
            source = obj.detach()
            buffer = next(old, None)
            if buffer is None or buffer.shape != source.shape or buffer.dtype != source.dtype:
                buffer = torch.empty(source.shape, dtype=source.dtype, device="cpu")
            self._pending.append((buffer, source))
            self._buffers.append(buffer)
            return buffer
        if isinstance(obj, Mapping):
            return {k: self._copy(v, old) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            if all(type(v) in _SCALARS for v in obj):  # e.g. RNG states: copy in one go
                return list(obj) if isinstance(obj, list) else obj
            items = [self._copy(v, old) for v in obj]
            return items if isinstance(obj, list) else tuple(items)
        if type(obj) in _SCALARS:
            return obj
        import copy

        return copy.deepcopy(obj)
