"""This process's rank, without importing torch when it is not loaded."""

from __future__ import annotations

import os
import sys


def process_rank() -> int:
    """The global rank: from torch.distributed when initialised, else ``$RANK``, else 0."""
    torch = sys.modules.get("torch")
    if torch is not None:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def process_world_size() -> int:
    """The number of processes: from torch.distributed when initialised, else
    ``$WORLD_SIZE``, else 1."""
    torch = sys.modules.get("torch")
    if torch is not None:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return int(dist.get_world_size())
    try:
        return int(os.environ.get("WORLD_SIZE", "1"))
    except ValueError:
        return 1


def device_id() -> int:
    """The id of this process's device on its machine: ``$LOCAL_RANK`` (default 0), mapped
    through ``$CUDA_VISIBLE_DEVICES`` when CUDA is available."""
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    import torch

    if not torch.cuda.is_available():
        return local_rank
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    devices = visible.split(",") if visible else list(range(torch.cuda.device_count()))
    return int(devices[local_rank])


def host_info() -> str:
    """``user@host`` of this process ('' when either cannot be found, as in some containers)."""
    import getpass
    import socket

    try:
        return f"{getpass.getuser()}@{socket.gethostname()}"
    except Exception:  # getuser raises various errors without a passwd entry
        return ""
