"""Collectives on tensors and plain Python objects that also work in a single process.

When no process group is initialized (or the group has one process) every
function returns what a one-process job would get: reductions leave the tensor
as it is, gathers return ``[data]``, broadcasts do nothing. Tensors are moved to
the device the backend needs (CUDA for NCCL) and the result comes back on the
device they came from.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.distributed as torch_dist

from ..utils.suggest import did_you_mean
from .utils import ProcessGroup, get_comm_device, get_rank, get_world_size

_REDUCE_OPS = ("sum", "mean", "max", "min", "product")


def _reduce_op(name: str) -> Any:
    ops = {
        "sum": torch_dist.ReduceOp.SUM,
        "mean": torch_dist.ReduceOp.SUM,  # divided by the world size afterwards
        "max": torch_dist.ReduceOp.MAX,
        "min": torch_dist.ReduceOp.MIN,
        "product": torch_dist.ReduceOp.PRODUCT,
    }
    return ops[name]


def _check_op(op: str) -> str:
    if not isinstance(op, str) or op.lower() not in _REDUCE_OPS:
        choices = ", ".join(repr(o) for o in _REDUCE_OPS)
        hint = did_you_mean(op, _REDUCE_OPS) if isinstance(op, str) else ""
        raise ValueError(f"reduce op must be one of {choices}, got {op!r}.{hint}")
    return op.lower()


def _check_tensor(data: Any, what: str) -> torch.Tensor:
    if not isinstance(data, torch.Tensor):
        raise TypeError(f"{what} expects a torch.Tensor, got {type(data).__name__}")
    return data


def all_reduce(data: torch.Tensor, op: str = "sum", group: ProcessGroup | None = None) -> None:
    """Reduce ``data`` over all processes in place: ``'sum'``, ``'mean'``, ``'max'``, ``'min'``.

    Afterwards every process holds the same values. ``'mean'`` needs a floating
    point (or complex) tensor. Does nothing when not distributed.
    """
    _check_tensor(data, "all_reduce")
    op = _check_op(op)
    if op == "mean" and not (data.is_floating_point() or data.is_complex()):
        raise TypeError(f"all_reduce(op='mean') needs a floating point tensor, got {data.dtype}")
    world_size = get_world_size(group)
    if world_size == 1:
        return
    device = get_comm_device(group)
    on_device = data if data.device == device else data.to(device)
    torch_dist.all_reduce(on_device, _reduce_op(op), group)
    if op == "mean":
        on_device.div_(world_size)
    if on_device is not data:
        data.copy_(on_device)


def all_gather(data: torch.Tensor, group: ProcessGroup | None = None) -> list[torch.Tensor]:
    """Return ``[data of rank 0, data of rank 1, ...]``; every rank's tensor has the same shape."""
    _check_tensor(data, "all_gather")
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    device = get_comm_device(group)
    on_device = data.to(device).contiguous()
    gathered = [torch.empty_like(on_device) for _ in range(world_size)]
    torch_dist.all_gather(gathered, on_device, group)
    if device != data.device:
        gathered = [t.to(data.device) for t in gathered]
    return gathered


def broadcast(data: torch.Tensor, src: int = 0, group: ProcessGroup | None = None) -> None:
    """Overwrite ``data`` in place with rank ``src``'s values (same shape everywhere)."""
    _check_tensor(data, "broadcast")
    if get_world_size(group) == 1:
        return
    device = get_comm_device(group)
    on_device = data if data.device == device and data.is_contiguous() else data.to(device)
    on_device = on_device.contiguous()
    torch_dist.broadcast(on_device, src, group)
    if on_device is not data:
        data.copy_(on_device)


def all_gather_object(obj: Any, group: ProcessGroup | None = None) -> list[Any]:
    """Return every rank's (picklable) ``obj`` as a list ordered by rank."""
    world_size = get_world_size(group)
    if world_size == 1:
        return [obj]
    gathered: list[Any] = [None] * world_size
    torch_dist.all_gather_object(gathered, obj, group)
    return gathered


def broadcast_object_list(objs: list[Any], src: int = 0, group: ProcessGroup | None = None) -> None:
    """Replace the items of ``objs`` in place with rank ``src``'s (picklable) items.

    Every rank passes a list of the same length.
    """
    if not isinstance(objs, list):
        raise TypeError(f"broadcast_object_list expects a list, got {type(objs).__name__}")
    if get_world_size(group) == 1:
        return
    device = get_comm_device(group)
    torch_dist.broadcast_object_list(objs, src=src, group=group, device=device)


def sync_random_seed(group: ProcessGroup | None = None) -> int:
    """Draw a seed in ``[0, 2**31)`` on rank 0 and return that same seed on every rank.

    The draw uses numpy's global generator, so a job that seeds numpy gets the
    same seed every run.
    """
    seed = int(np.random.randint(2**31))
    if get_world_size(group) == 1:
        return seed
    value = torch.tensor(seed if get_rank(group) == 0 else 0, dtype=torch.int64)
    src = 0 if group is None else torch_dist.get_global_rank(group, 0)
    broadcast(value, src=src, group=group)
    return int(value.item())
