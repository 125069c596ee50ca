"""Process-group setup from the launcher: torchrun, SLURM or Open MPI.

Each launcher leaves its facts in environment variables; they are translated
into the ``RANK``/``WORLD_SIZE``/``LOCAL_RANK``/``MASTER_ADDR``/``MASTER_PORT``
that ``torch.distributed`` reads, then the process group is created.
"""

from __future__ import annotations

import datetime
import os
import re
import subprocess
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as torch_dist

from ..resilience.elastic_store import restart_safe_store, shared_store_warning

LAUNCHERS = ("none", "pytorch", "slurm", "mpi")
DEFAULT_PORT = "29500"


@dataclass(frozen=True)
class ProcessInfo:
    """Where this process sits in the job."""

    rank: int
    world_size: int
    local_rank: int
    master_addr: str
    master_port: str


def infer_launcher(env: Mapping[str, str] | None = None) -> str:
    """Guess the launcher from the environment (torchrun, SLURM, Open MPI, or none)."""
    env = os.environ if env is None else env
    if "LOCAL_RANK" in env and "WORLD_SIZE" in env and "RANK" in env:
        return "pytorch"
    if int(env.get("SLURM_NTASKS", "1")) > 1 and "SLURM_PROCID" in env:
        return "slurm"
    if int(env.get("OMPI_COMM_WORLD_SIZE", "1")) > 1:
        return "mpi"
    return "none"


def first_slurm_host(nodelist: str) -> str:
    """The first host of a SLURM node list (``'gpu[03-05,9],cpu1'`` → ``'gpu03'``)."""
    try:
        out = subprocess.run(
            ["scontrol", "show", "hostnames", nodelist],
            capture_output=True, text=True, timeout=10, check=True,
        )  # fmt: skip
        hosts = out.stdout.split()
        if hosts:
            return hosts[0]
    except (OSError, subprocess.SubprocessError):
        pass
    first = re.split(r",(?![^\[]*\])", nodelist)[0]
    match = re.match(r"^([^\[]+)\[([^\]]+)\]", first)
    if not match:
        return first
    prefix, ranges = match.groups()
    start = ranges.split(",")[0].split("-")[0]
    return prefix + start


def process_info(launcher: str, env: Mapping[str, str] | None = None) -> ProcessInfo:
    """Read this process's rank, world size, local rank and master address."""
    env = os.environ if env is None else env

    def need(*names: str) -> list[str]:
        missing = [n for n in names if n not in env]
        if missing:
            raise RuntimeError(
                f"launcher='{launcher}' needs the environment variables {', '.join(missing)}; "
                "were the processes started by that launcher?"
            )
        return [env[n] for n in names]

    if launcher == "pytorch":
        rank, world, local = need("RANK", "WORLD_SIZE", "LOCAL_RANK")
        addr = env.get("MASTER_ADDR", "127.0.0.1")
        port = env.get("MASTER_PORT", DEFAULT_PORT)
    elif launcher == "slurm":
        rank, world, local, nodes = need("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID",
                                         "SLURM_NODELIST")  # fmt: skip
        addr = env.get("MASTER_ADDR") or first_slurm_host(nodes)
        port = env.get("MASTER_PORT", DEFAULT_PORT)
    elif launcher == "mpi":
        rank, world, local = need("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                                  "OMPI_COMM_WORLD_LOCAL_RANK")  # fmt: skip
        addr = env.get("MASTER_ADDR", "127.0.0.1")
        port = env.get("MASTER_PORT", DEFAULT_PORT)
    else:
        from ..utils import did_you_mean

        raise ValueError(
            f"unknown launcher '{launcher}'; expected one of {', '.join(LAUNCHERS)}."
            + did_you_mean(launcher, LAUNCHERS)
        )
    return ProcessInfo(int(rank), int(world), int(local), addr, str(port))


def default_backend(requested: str | None) -> str:
    """nccl on CUDA, gloo otherwise; a requested nccl without CUDA falls back to gloo."""
    if requested is None:
        return "nccl" if torch.cuda.is_available() else "gloo"
    if requested == "nccl" and not torch.cuda.is_available():
        warnings.warn("dist_cfg.backend='nccl' needs CUDA; using 'gloo' on this CPU machine",
                      stacklevel=3)  # fmt: skip
        return "gloo"
    return requested


def init_process_group(launcher: str, dist_cfg: Mapping[str, Any]) -> ProcessInfo:
    """Create the default process group for ``launcher`` (reuse one that exists)."""
    if torch_dist.is_available() and torch_dist.is_initialized():
        rank, world = torch_dist.get_rank(), torch_dist.get_world_size()
        local = int(os.environ.get("LOCAL_RANK", rank))
        return ProcessInfo(rank, world, local, os.environ.get("MASTER_ADDR", ""), "")
    if launcher in (None, "auto"):
        launcher = infer_launcher()
    if launcher == "none":
        raise RuntimeError(
            "a distributed strategy needs several processes: start them with e.g. "
            "`torchrun --nproc_per_node 2 ... --launcher pytorch` (or under srun / mpirun)"
        )
    info = process_info(launcher, os.environ)
    os.environ.update(
        RANK=str(info.rank), WORLD_SIZE=str(info.world_size), LOCAL_RANK=str(info.local_rank),
        MASTER_ADDR=info.master_addr, MASTER_PORT=info.master_port,
    )  # fmt: skip
    cfg = dict(dist_cfg)
    cfg.pop("hang_timeout", None)  # the runner's hang watchdog (cadence.resilience.hang_watch)
    backend = default_backend(cfg.pop("backend", None))
    timeout = datetime.timedelta(seconds=float(cfg.pop("timeout", 1800)))
    if backend == "nccl":
        torch.cuda.set_device(info.local_rank % max(torch.cuda.device_count(), 1))
    if launcher == "pytorch" and not {"store", "init_method"} & set(cfg):
        store = restart_safe_store(os.environ, info.world_size, timeout)
        if store is not None:
            cfg["store"] = store
        warning = shared_store_warning(os.environ)
        if warning and info.rank == 0:
            warnings.warn(warning, stacklevel=3)
    torch_dist.init_process_group(
        backend, rank=info.rank, world_size=info.world_size, timeout=timeout, **cfg
    )
    return info
