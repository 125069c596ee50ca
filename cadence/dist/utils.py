"""Where this process stands in the job: rank, world size, local rank, main process.

Every function answers for a single process (rank 0 of 1) when no process group
is initialized, so code written for distributed runs also works unchanged in a
plain ``python train.py``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import torch
import torch.distributed as torch_dist

from ..resilience import heartbeat

ProcessGroup = Any  # torch.distributed.ProcessGroup; kept loose for builds without distributed
F = TypeVar("F", bound=Callable[..., Any])


def is_distributed() -> bool:
    """Return whether a default process group is initialized."""
    return torch_dist.is_available() and torch_dist.is_initialized()


def get_rank(group: ProcessGroup | None = None) -> int:
    """Rank of this process in ``group`` (default: the whole job); 0 when not distributed."""
    if not is_distributed():
        return 0
    return torch_dist.get_rank(group)


def get_world_size(group: ProcessGroup | None = None) -> int:
    """Number of processes in ``group`` (default: the whole job); 1 when not distributed."""
    if not is_distributed():
        return 1
    return torch_dist.get_world_size(group)


def get_dist_info(group: ProcessGroup | None = None) -> tuple[int, int]:
    """Return ``(rank, world_size)`` of this process in ``group``."""
    return get_rank(group), get_world_size(group)


def is_main_process(group: ProcessGroup | None = None) -> bool:
    """Return whether this process is rank 0 of ``group``."""
    return get_rank(group) == 0


def _env_int(name: str) -> int | None:
    value = os.environ.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError as exc:
        raise ValueError(f"environment variable {name} must be an integer, got {value!r}") from exc


def get_default_group() -> ProcessGroup | None:
    """The default (whole job) process group; ``None`` when not distributed."""
    if not is_distributed():
        return None
    return torch_dist.distributed_c10d._get_default_group()


# (default group it was made in, this machine's group); reset when the job's group changes
_local_group: tuple[Any, Any] | None = None


def init_local_group(node_rank: int, num_gpus_per_node: int) -> None:
    """Create the process group of the processes on this machine (mmengine's name).

    Machine ``n`` holds global ranks ``n * num_gpus_per_node`` up to the next
    machine's first rank. Every process of the job must call it (each with its
    own ``node_rank``), as ``torch.distributed.new_group`` requires. Does
    nothing when not distributed.
    """
    global _local_group
    for name, value in (("node_rank", node_rank), ("num_gpus_per_node", num_gpus_per_node)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    if num_gpus_per_node == 0:
        raise ValueError("num_gpus_per_node must be at least 1, got 0")
    if not is_distributed():
        return
    default = get_default_group()
    if _local_group is not None and _local_group[0] is default:
        raise RuntimeError("the local process group is already initialized")
    rank, world_size = get_rank(), get_world_size()
    if rank // num_gpus_per_node != node_rank:
        raise ValueError(
            f"rank {rank} cannot be on machine {node_rank} with {num_gpus_per_node} "
            f"processes per machine (it belongs to machine {rank // num_gpus_per_node})"
        )
    mine = None
    for first in range(0, world_size, num_gpus_per_node):  # every rank creates every group
        group = torch_dist.new_group(list(range(first, min(first + num_gpus_per_node, world_size))))
        if first // num_gpus_per_node == node_rank:
            mine = group
    _local_group = (default, mine)


def get_local_group() -> ProcessGroup | None:
    """The group made by :func:`init_local_group`; ``None`` when not distributed."""
    if not is_distributed():
        return None
    if _local_group is None or _local_group[0] is not get_default_group():
        raise RuntimeError(
            "the local process group is not created; call init_local_group(node_rank, "
            "num_gpus_per_node) on every process first"
        )
    return _local_group[1]


def _local_group_or_none() -> Any:
    if _local_group is None or _local_group[0] is not get_default_group():
        return None
    return _local_group[1]


def get_local_rank() -> int:
    """Rank of this process among the processes of its machine.

    Read from ``LOCAL_RANK`` (set by ``torchrun`` and by cadence's launchers), so
    it is known before the process group exists; else the rank in the group of
    :func:`init_local_group`; 0 when not distributed.
    """
    local_rank = _env_int("LOCAL_RANK")
    if local_rank is not None:
        return local_rank
    if not is_distributed() or get_world_size() == 1:
        return 0
    local_group = _local_group_or_none()
    if local_group is not None:
        return int(torch_dist.get_rank(local_group))
    raise RuntimeError(
        "the local rank is unknown: the process group is initialized but LOCAL_RANK is not "
        "set; launch with torchrun or set LOCAL_RANK for every process"
    )


def get_local_size() -> int:
    """Number of processes on this machine.

    Read from ``LOCAL_WORLD_SIZE`` (set by ``torchrun``), else the size of the
    group of :func:`init_local_group`; 1 when not distributed.
    """
    local_size = _env_int("LOCAL_WORLD_SIZE")
    if local_size is not None:
        return local_size
    if not is_distributed() or get_world_size() == 1:
        return 1
    local_group = _local_group_or_none()
    if local_group is not None:
        return int(torch_dist.get_world_size(local_group))
    raise RuntimeError(
        "the local world size is unknown: the process group is initialized but "
        "LOCAL_WORLD_SIZE is not set; launch with torchrun or set LOCAL_WORLD_SIZE"
    )


def master_only(func: F) -> F:
    """Decorate ``func`` so that it runs on rank 0 only; other ranks get ``None``."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if is_main_process():
            return func(*args, **kwargs)
        return None

    return wrapper  # type: ignore[return-value]


def barrier(group: ProcessGroup | None = None) -> None:
    """Wait until every process of ``group`` gets here; nothing when not distributed."""
    if get_world_size(group) > 1:
        with heartbeat.current.waiting("a barrier"):  # the hang watchdog names the wait
            torch_dist.barrier(group)


def get_backend(group: ProcessGroup | None = None) -> str | None:
    """The backend name (``'gloo'``, ``'nccl'``...); ``None`` when not distributed."""
    if not is_distributed():
        return None
    return str(torch_dist.get_backend(group))


#: Backends of other accelerators and the torch device type their tensors must live on.
_ACCELERATOR_BACKENDS = {"hccl": "npu", "cncl": "mlu", "mccl": "musa"}


def get_comm_device(group: ProcessGroup | None = None) -> torch.device:
    """The device that tensors must live on to be sent through ``group``'s backend."""
    backend = get_backend(group)
    if backend in ("nccl", "smddp"):
        return torch.device("cuda", torch.cuda.current_device())
    accelerator = _ACCELERATOR_BACKENDS.get(backend or "")
    if accelerator is not None:  # the backend's torch extension registered torch.<device>
        return torch.device(accelerator, getattr(torch, accelerator).current_device())
    return torch.device("cpu")  # gloo, mpi
