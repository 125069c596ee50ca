"""DataLoader workers leave the stop signals of a run to its main process.

SLURM, Kubernetes and torchrun stop a job by signalling every process of it
(``kill -TERM -PGID``, a cgroup, ``killpg`` of each rank), the DataLoader
workers included. A worker that dies of it makes the main process fail
("DataLoader worker ... is killed by signal") while it writes the preemption
checkpoint, and the work since the last checkpoint is lost. So, when a worker
starts, :class:`ShieldedWorkerInit` blocks ``SIGTERM``, ``SIGINT`` and
``SIGUSR1`` in it and a daemon thread takes them with ``sigwaitinfo``:

* from anyone but the worker's parent they are dropped: the main process
  got the same signal and decides (save and stop, or exit);
* from the parent (the DataLoader's shutdown, ``multiprocessing`` at exit,
  which terminate workers that did not stop in time) the worker exits at
  once with code 0, as torch's own worker handler does, so workers never
  outlive their main process and a shutdown never waits on them.

Platforms without ``sigwaitinfo`` (macOS, Windows) keep torch's behaviour.

A worker also prints every thread's Python stack on stderr when it gets
:data:`STACK_SIGNAL` (SIGUSR2): a loader whose worker delivers nothing within
its ``timeout`` asks the stuck worker for it (:mod:`cadence.dataset.explained_loader`).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import threading
from collections.abc import Callable, Sequence
from typing import Any

#: The signals a worker leaves to its main process (the preemption hook's and Ctrl-C).
WORKER_SHIELDED_SIGNALS: tuple[str, ...] = ("SIGTERM", "SIGINT", "SIGUSR1")
#: The signal on which a worker prints its Python stacks (None where there is no SIGUSR2).
STACK_SIGNAL: int | None = getattr(signal, "SIGUSR2", None)


def shield_worker_signals(names: Sequence[str] = WORKER_SHIELDED_SIGNALS) -> bool:
    """In a worker process: drop ``names`` unless the parent sends them (then exit 0).

    Returns whether the shield is up (``False`` where ``sigwaitinfo`` is missing).
    """
    sigwaitinfo = getattr(signal, "sigwaitinfo", None)
    if sigwaitinfo is None:
        return False
    signals = {getattr(signal, name) for name in names if hasattr(signal, name)}
    parent = os.getppid()
    # Blocked before the thread starts, so that the thread and everything started later
    # inherit the mask and the signals wait for sigwaitinfo instead of a handler.
    signal.pthread_sigmask(signal.SIG_BLOCK, signals)
    watcher = threading.Thread(
        target=_drop_unless_from, args=(parent, sigwaitinfo, signals),
        name="cadence-worker-signals", daemon=True,
    )  # fmt: skip
    watcher.start()
    return True


def _drop_unless_from(
    parent: int, sigwaitinfo: Callable[[set[int]], Any], signals: set[int]
) -> None:
    while True:
        info = sigwaitinfo(signals)
        if info.si_pid == parent:
            os._exit(0)


def register_stack_dump() -> bool:
    """In a worker: print every thread's Python stack on stderr on :data:`STACK_SIGNAL`
    (``faulthandler``: it works even when the worker's Python is stuck)."""
    if STACK_SIGNAL is None:
        return False
    try:
        faulthandler.register(STACK_SIGNAL, all_threads=True, chain=False)
    except (RuntimeError, ValueError, OSError):  # no usable stderr
        return False
    return True


class ShieldedWorkerInit:
    """A picklable ``worker_init_fn``: :func:`shield_worker_signals` and
    :func:`register_stack_dump`, then ``init_fn``.

    Args:
        init_fn: the worker init function it wraps (seeding, the user's), or ``None``.
    """

    def __init__(self, init_fn: Callable[[int], Any] | None = None) -> None:
        self.init_fn = init_fn

    def __call__(self, worker_id: int) -> Any:
        """Shield the calling worker, then run the wrapped function."""
        shield_worker_signals()
        register_stack_dump()
        return None if self.init_fn is None else self.init_fn(worker_id)


def unshielded(init_fn: Any) -> Any:
    """The function a :class:`ShieldedWorkerInit` wraps (``init_fn`` itself otherwise)."""
    return init_fn.init_fn if isinstance(init_fn, ShieldedWorkerInit) else init_fn
