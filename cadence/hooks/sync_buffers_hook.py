"""Average the model's buffers (BatchNorm statistics) over the processes of a run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import torch
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

from ..dist import all_reduce, get_world_size
from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def all_reduce_buffers(buffers: Iterable[torch.Tensor]) -> None:
    """Replace every buffer by its mean over all processes, one collective per dtype.

    Integer buffers (such as BatchNorm's batch counter) get the floor of the mean.
    Does nothing outside a distributed run.
    """
    world_size = get_world_size()
    if world_size == 1:
        return
    by_dtype: dict[torch.dtype, list[torch.Tensor]] = {}
    for buf in buffers:
        by_dtype.setdefault(buf.dtype, []).append(buf)
    for dtype, group in by_dtype.items():
        flat = _flatten_dense_tensors([b.detach() for b in group])
        if dtype.is_floating_point or dtype.is_complex:
            all_reduce(flat, op="mean")
        else:
            all_reduce(flat, op="sum")
            flat = torch.div(flat, world_size, rounding_mode="floor")
        with torch.no_grad():
            for buf, synced in zip(group, _unflatten_dense_tensors(flat, group)):
                buf.copy_(synced)


@HOOKS.register_module()
class SyncBuffersHook(Hook):
    """All-reduce (average) the model's buffers after each training epoch.

    DDP keeps parameters equal on every rank, but buffers such as BatchNorm's
    running statistics drift apart (or follow rank 0 only). With an
    iteration-based loop, which has no epochs, they are synchronized before
    each validation instead. Nothing happens in a single-process run.
    """

    priority = "NORMAL"

    def __init__(self) -> None:
        self._synced_after_train = False

    @staticmethod
    def _sync(runner: RunnerProtocol) -> None:
        all_reduce_buffers(runner.strategy.unwrap(runner.model).buffers())

    def after_train_epoch(self, runner: RunnerProtocol) -> None:
        """Average the buffers at the end of each epoch."""
        self._sync(runner)
        self._synced_after_train = True

    def before_val_epoch(self, runner: RunnerProtocol) -> None:
        """Average the buffers unless the end of a training epoch just did."""
        if not self._synced_after_train:
            self._sync(runner)
        self._synced_after_train = False


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(SyncBuffersHook)
