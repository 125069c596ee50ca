"""Run a function in several local processes joined by a process group (for tests).

``run_distributed(fn, *args)`` starts ``world_size`` fresh processes (forked from a clean
fork server that imported torch once; spawned where there is none) on
this machine, joins them into a gloo group over ``127.0.0.1`` on a free port and
calls ``fn(*args)`` in each; it returns the ranks' return values ordered by rank.
The group's store is served by the calling process on a port the OS gave it and held
for the whole run, so parallel tests can never take each other's port (a port that is
free, closed, then bound by the ranks could be taken in between).
A failure in any rank, or a run longer than ``timeout`` seconds, stops every
process and raises, so a broken collective fails a test instead of hanging it.
``fn`` and its arguments must be picklable (a module-level function).
"""

from __future__ import annotations

import datetime
import os
import queue
import socket
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import torch.distributed as torch_dist
import torch.multiprocessing as mp


def free_port() -> int:
    """Return a TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _worker(
    rank: int,
    world_size: int,
    port: int,
    backend: str,
    timeout: float,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    results: Any,
) -> None:
    os.environ.update(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        RANK=str(rank),
        WORLD_SIZE=str(world_size),
        LOCAL_RANK=str(rank),
        LOCAL_WORLD_SIZE=str(world_size),
    )
    try:
        wait = datetime.timedelta(seconds=timeout)
        store = torch_dist.TCPStore("127.0.0.1", port, world_size, is_master=False, timeout=wait)
        torch_dist.init_process_group(
            backend, store=store, rank=rank, world_size=world_size, timeout=wait
        )
        try:
            results.put((rank, True, fn(*args)))
        finally:
            torch_dist.destroy_process_group()
    except BaseException:  # report everything, including KeyboardInterrupt, to the parent
        results.put((rank, False, traceback.format_exc()))


def _stop(processes: list[Any]) -> None:
    for proc in processes:
        if proc.is_alive():
            proc.terminate()
    for proc in processes:
        proc.join(timeout=5)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=5)


def _raise_if_dead(processes: list[Any], outputs: dict[int, Any], fn: Callable[..., Any]) -> None:
    for rank, proc in enumerate(processes):
        if rank not in outputs and proc.exitcode not in (None, 0):
            raise RuntimeError(
                f"rank {rank} died with exit code {proc.exitcode} in {fn.__qualname__}"
            )


def _more_failures(results: Any, received: int, world_size: int) -> dict[int, str]:
    """Errors from other ranks that arrive soon after a first one (maybe the root cause)."""
    failures: dict[int, str] = {}
    deadline = time.monotonic() + 2.0
    while received < world_size and time.monotonic() < deadline:
        try:
            rank, ok, value = results.get(timeout=max(deadline - time.monotonic(), 0.01))
        except queue.Empty:
            break
        received += 1
        if not ok:
            failures[rank] = value
    return failures


#: Imported once by the fork server; each rank forks from it instead of importing anew.
#: ``torch._dynamo`` is what DistributedDataParallel and FSDP's ``fully_shard`` import on
#: first use (3 s per rank). None of them starts a thread on import, so forking after
#: them is safe; a module a version lacks is skipped (the fork server ignores it).
PRELOAD = (
    "torch", "torch.distributed", "torch._dynamo", "torch.distributed.checkpoint",
    "cadence.runner",
)  # fmt: skip
#: Preloaded too where the calling process has imported DeepSpeed (3.5 s to import, and
#: the module its ZeRO optimizer check imports on first use: 3 s, it compiles functions):
#: a process that runs DeepSpeed ranks pays once, one that never does pays nothing.
DEEPSPEED_PRELOAD = ("deepspeed", "deepspeed.runtime.zero.muon.muon_optimizer")


def fork_context() -> Any:
    """Fresh ranks without paying for ``import torch`` each time: a fork server (started
    once, clean: it never ran a test) that imported :data:`PRELOAD` (and
    :data:`DEEPSPEED_PRELOAD` where this process imported DeepSpeed before it started);
    spawn where there is none (Windows)."""
    if "forkserver" not in mp.get_all_start_methods():
        return mp.get_context("spawn")
    ctx = mp.get_context("forkserver")
    deepspeed = DEEPSPEED_PRELOAD if "deepspeed" in sys.modules else ()
    ctx.set_forkserver_preload([*PRELOAD, *deepspeed])
    return ctx


def _serve_store(world_size: int, timeout: float) -> torch_dist.TCPStore:
    """A store server on a port the OS picks, bound until the caller drops it."""
    return torch_dist.TCPStore(
        "127.0.0.1", 0, world_size, is_master=True,
        timeout=datetime.timedelta(seconds=timeout), wait_for_workers=False,
    )  # fmt: skip


def run_distributed(
    fn: Callable[..., Any],
    *args: Any,
    world_size: int = 2,
    backend: str = "gloo",
    timeout: float = 30.0,
) -> list[Any]:
    """Call ``fn(*args)`` on ``world_size`` spawned ranks; return their results by rank."""
    if world_size < 1:
        raise ValueError(f"world_size must be at least 1, got {world_size}")
    ctx = fork_context()
    results = ctx.Queue()
    store = _serve_store(world_size, timeout)
    port = store.port
    processes = [
        ctx.Process(
            target=_worker,
            args=(rank, world_size, port, backend, timeout, fn, args, results),
            daemon=True,
        )
        for rank in range(world_size)
    ]
    for proc in processes:
        proc.start()
    deadline = time.monotonic() + timeout
    outputs: dict[int, Any] = {}
    try:
        while len(outputs) < world_size:
            remaining = deadline - time.monotonic()
            try:
                rank, ok, value = results.get(timeout=min(max(remaining, 0.01), 0.5))
            except queue.Empty:
                _raise_if_dead(processes, outputs, fn)
                if time.monotonic() < deadline:
                    continue
                missing = sorted(set(range(world_size)) - set(outputs))
                raise TimeoutError(
                    f"ranks {missing} did not finish {fn.__qualname__} within {timeout} s"
                ) from None
            if not ok:
                failures = {rank: value, **_more_failures(results, len(outputs) + 1, world_size)}
                raise RuntimeError(
                    "\n".join(
                        f"rank {r} failed in {fn.__qualname__}:\n{failures[r]}"
                        for r in sorted(failures)
                    )
                )
            outputs[rank] = value
        for proc in processes:
            proc.join(timeout=max(deadline - time.monotonic(), 1.0))
    finally:
        _stop(processes)
        del store
    return [outputs[rank] for rank in range(world_size)]
