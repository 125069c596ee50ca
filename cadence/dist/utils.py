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


def get_local_rank() -> int:
    """Rank of this process among the processes of its machine.

    Read from ``LOCAL_RANK`` (set by ``torchrun`` and by cadence's launchers), so
    it is known before the process group exists; 0 when not distributed.
    """
    local_rank = _env_int("LOCAL_RANK")
    if local_rank is not None:
        return local_rank
    if not is_distributed() or get_world_size() == 1:
        return 0
    raise RuntimeError(
        "the local rank is unknown: the process group is initialized but LOCAL_RANK is not "
        "set; launch with torchrun or set LOCAL_RANK for every process"
    )


def get_local_size() -> int:
    """Number of processes on this machine.

    Read from ``LOCAL_WORLD_SIZE`` (set by ``torchrun``); 1 when not distributed.
    """
    local_size = _env_int("LOCAL_WORLD_SIZE")
    if local_size is not None:
        return local_size
    if not is_distributed() or get_world_size() == 1:
        return 1
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
        torch_dist.barrier(group)


def get_backend(group: ProcessGroup | None = None) -> str | None:
    """The backend name (``'gloo'``, ``'nccl'``...); ``None`` when not distributed."""
    if not is_distributed():
        return None
    return str(torch_dist.get_backend(group))


def get_comm_device(group: ProcessGroup | None = None) -> torch.device:
    """The device that tensors must live on to be sent through ``group``'s backend."""
    backend = get_backend(group)
    if backend == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")
