"""Collectives on tensors and plain Python objects that also work in a single process.

When no process group is initialized (or the group has one process) every
function returns what a one-process job would get: reductions leave the tensor
as it is, gathers return ``[data]``, broadcasts do nothing. Tensors are moved to
the device the backend needs (CUDA for NCCL) and the result comes back on the
device they came from.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch
import torch.distributed as torch_dist

from ..resilience import heartbeat
from ..utils.suggest import did_you_mean
from .utils import ProcessGroup, get_comm_device, get_rank, get_world_size

_REDUCE_OPS = ("sum", "mean", "max", "min", "product", "band", "bor", "bxor")


class CollectiveArgumentError(TypeError, AssertionError):
    """A collective given the wrong kind of container (mmengine asserted, hence both bases)."""


def _reduce_op(name: str) -> Any:
    ops = {
        "sum": torch_dist.ReduceOp.SUM,
        "mean": torch_dist.ReduceOp.SUM,  # divided by the world size afterwards
        "max": torch_dist.ReduceOp.MAX,
        "min": torch_dist.ReduceOp.MIN,
        "product": torch_dist.ReduceOp.PRODUCT,
        "band": torch_dist.ReduceOp.BAND,
        "bor": torch_dist.ReduceOp.BOR,
        "bxor": torch_dist.ReduceOp.BXOR,
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
    """Reduce ``data`` over all processes in place: ``'sum'``, ``'mean'``, ``'max'``,
    ``'min'``, ``'product'``, or bitwise ``'band'``, ``'bor'``, ``'bxor'``.

    Afterwards every process holds the same values. ``'mean'`` of an integer
    tensor is the float mean written back into it, so it is truncated toward
    zero (as mmengine does). Does nothing when not distributed.
    """
    _check_tensor(data, "all_reduce")
    op = _check_op(op)
    world_size = get_world_size(group)
    if world_size == 1:
        return
    device = get_comm_device(group)
    on_device = data if data.device == device else data.to(device)
    torch_dist.all_reduce(on_device, _reduce_op(op), group)
    if op == "mean":
        if on_device.is_floating_point() or on_device.is_complex():
            on_device.div_(world_size)
        else:
            data.copy_(torch.true_divide(on_device, world_size))
            return
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


def gather(data: torch.Tensor, dst: int = 0, group: ProcessGroup | None = None) -> list[Any]:
    """Rank ``dst`` gets ``[data of rank 0, data of rank 1, ...]``; other ranks get ``[]``.

    Every rank's tensor has the same shape; ``dst`` is a global rank, as in
    ``torch.distributed``. Not distributed: ``[data]``.
    """
    _check_tensor(data, "gather")
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    device = get_comm_device(group)
    on_device = data.to(device).contiguous()
    if torch_dist.get_rank() != dst:
        torch_dist.gather(on_device, None, dst, group)
        return []
    gathered = [torch.empty_like(on_device) for _ in range(world_size)]
    torch_dist.gather(on_device, gathered, dst, group)
    return [t.to(data.device) for t in gathered] if device != data.device else gathered


def gather_object(data: Any, dst: int = 0, group: ProcessGroup | None = None) -> list[Any] | None:
    """Rank ``dst`` gets every rank's (picklable) ``data`` by rank; other ranks get ``None``.

    ``dst`` is a global rank. Not distributed: ``[data]``.
    """
    world_size = get_world_size(group)
    if world_size == 1:
        return [data]
    gathered: list[Any] | None = [None] * world_size if torch_dist.get_rank() == dst else None
    with heartbeat.current.waiting("gather_object"):  # the hang watchdog names the wait
        torch_dist.gather_object(data, gathered, dst, group)
    return gathered


def all_gather_object(obj: Any, group: ProcessGroup | None = None) -> list[Any]:
    """Return every rank's (picklable) ``obj`` as a list ordered by rank."""
    world_size = get_world_size(group)
    if world_size == 1:
        return [obj]
    gathered: list[Any] = [None] * world_size
    with heartbeat.current.waiting("all_gather_object"):
        torch_dist.all_gather_object(gathered, obj, group)
    return gathered


def broadcast_object_list(objs: list[Any], src: int = 0, group: ProcessGroup | None = None) -> None:
    """Replace the items of ``objs`` in place with rank ``src``'s (picklable) items.

    Every rank passes a list of the same length.
    """
    if not isinstance(objs, list):
        raise CollectiveArgumentError(
            f"broadcast_object_list expects a list, got {type(objs).__name__}"
        )
    if get_world_size(group) == 1:
        return
    device = get_comm_device(group)
    with heartbeat.current.waiting("broadcast_object_list"):
        torch_dist.broadcast_object_list(objs, src=src, group=group, device=device)


def all_reduce_dict(
    data: dict[str, torch.Tensor], op: str = "sum", group: ProcessGroup | None = None
) -> None:
    """Reduce every tensor of ``data`` over all processes, in one collective.

    The tensors are flattened into one (in key order, so every rank must hold
    the same keys and shapes), reduced as :func:`all_reduce` does, and put back
    into ``data`` as new tensors of the old shapes (mixed dtypes come back
    promoted to a common one). Does nothing when not distributed.
    """
    if not isinstance(data, dict):
        raise CollectiveArgumentError(
            f"all_reduce_dict expects a dict of tensors, got {type(data).__name__}"
        )
    op = _check_op(op)
    if get_world_size(group) == 1 or not data:
        return
    keys = sorted(data)
    for key in keys:
        _check_tensor(data[key], f"all_reduce_dict (key {key!r})")
    flat = torch.cat([data[key].reshape(-1) for key in keys])
    all_reduce(flat, op, group)
    pieces = torch.split(flat, [data[key].numel() for key in keys])
    for key, piece in zip(keys, pieces):
        data[key] = piece.reshape(data[key].shape)


def _buckets(tensors: list[torch.Tensor], bucket_bytes: int) -> list[list[torch.Tensor]]:
    """Tensors of one dtype and device together, cut into runs of at most ``bucket_bytes``
    (no limit when it is not positive; a bigger tensor gets a bucket of its own)."""
    by_kind: dict[tuple[Any, Any], list[list[torch.Tensor]]] = {}
    sizes: dict[tuple[Any, Any], int] = {}
    for tensor in tensors:
        kind = (tensor.dtype, tensor.device)
        nbytes = tensor.numel() * tensor.element_size()
        runs = by_kind.setdefault(kind, [[]])
        if bucket_bytes > 0 and runs[-1] and sizes[kind] + nbytes > bucket_bytes:
            runs.append([])
            sizes[kind] = 0
        runs[-1].append(tensor)
        sizes[kind] = sizes.get(kind, 0) + nbytes
    return [run for runs in by_kind.values() for run in runs]


def all_reduce_params(
    params: Iterable[torch.Tensor],
    coalesce: bool = True,
    bucket_size_mb: int = -1,
    op: str = "sum",
    group: ProcessGroup | None = None,
) -> None:
    """Reduce the data of parameters (or buffers) over all processes, in place.

    With ``coalesce`` the tensors of one dtype and device travel flattened
    together, in buckets of ``bucket_size_mb`` MB when that is positive; else
    one collective per tensor. Does nothing (and reads nothing of ``params``)
    when not distributed.
    """
    op = _check_op(op)
    if get_world_size(group) == 1:
        return
    tensors = [_check_tensor(getattr(p, "data", p), "all_reduce_params") for p in params]
    if not coalesce:
        for tensor in tensors:
            all_reduce(tensor, op, group)
        return
    for bucket in _buckets(tensors, int(bucket_size_mb * 1024 * 1024)):
        flat = torch.cat([t.reshape(-1) for t in bucket])
        all_reduce(flat, op, group)
        for tensor, piece in zip(bucket, torch.split(flat, [t.numel() for t in bucket])):
            tensor.copy_(piece.view_as(tensor))


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
