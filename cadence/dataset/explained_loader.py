"""A DataLoader whose errors name the config that built it and what to check.

torch's own message for a worker that delivers nothing within ``timeout``
seconds is ``RuntimeError: DataLoader timed out after N seconds``. The
:class:`ExplainedDataLoader` that :func:`~cadence.dataset.build_dataloader`
returns raises :class:`DataLoaderTimeoutError` (a ``RuntimeError``) instead,
naming the loader's config key, its timeout setting, the worker that owes the
batch (whose Python stack it first has the worker print on stderr, where the
worker allows it) and what to look at. Any other error raised while fetching a
batch gets a note naming the loader's config key.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from typing import Any

from torch.utils.data import DataLoader

from .sample_errors import add_note
from .worker_signals import STACK_SIGNAL

#: ``timeout`` of a loader with workers when its config does not set one.
DEFAULT_LOADER_TIMEOUT = 300.0
_TIMED_OUT = "DataLoader timed out after"


class DataLoaderTimeoutError(RuntimeError):
    """No batch came from a DataLoader's workers within its ``timeout``."""


class ExplainedDataLoader(DataLoader):
    """A ``torch.utils.data.DataLoader`` that explains its timeout (see the module doc).

    ``key_path`` (an attribute, set after construction) names its config in messages.
    """

    key_path = "dataloader"

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]  # torch's iterator, wrapped
        return _Explained(super().__iter__(), self)


class _Explained:
    """An iterator over a loader's batches that explains the errors of fetching one."""

    __slots__ = ("_batches", "_loader")

    def __init__(self, batches: Any, loader: ExplainedDataLoader) -> None:
        self._batches = batches
        self._loader = loader

    def __iter__(self) -> _Explained:
        return self

    def __next__(self) -> Any:
        # The exception is never bound to a name here: a frame that holds the exception it
        # raises is a reference cycle, and an iterator freed by the garbage collector instead
        # of at once may wait 5 s per worker to shut down (torch's join of its workers).
        try:
            return self._batches.__next__()
        except StopIteration:
            raise
        except Exception:
            if _timed_out(sys.exc_info()[1]):
                raise _timeout_error(sys.exc_info()[1], self._loader, self._batches)  # noqa: B904
            _note(sys.exc_info()[1], self._loader)
            raise

    def __len__(self) -> int:
        return len(self._batches)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._batches, name)


def _timed_out(exc: BaseException | None) -> bool:
    return isinstance(exc, RuntimeError) and str(exc).startswith(_TIMED_OUT)


def _timeout_error(
    cause: BaseException | None, loader: ExplainedDataLoader, batches: Any
) -> DataLoaderTimeoutError:
    """The :class:`DataLoaderTimeoutError` for torch's ``cause``, chained to it."""
    error = DataLoaderTimeoutError(explain_timeout(loader, batches))
    error.__cause__ = cause
    return error


def _note(exc: BaseException | None, loader: ExplainedDataLoader) -> None:
    if exc is None:
        return
    workers = loader.num_workers
    by = f"its {workers} worker processes" if workers else "the main process (num_workers=0)"
    add_note(exc, f"cadence: raised while {loader.key_path} fetched a batch in {by}")


def explain_timeout(loader: ExplainedDataLoader, batches: Any) -> str:
    """The message of a timed-out ``loader`` (``batches``: torch's iterator over it).

    The worker that owes the batch is read from torch's iterator where it keeps it
    (private attributes, read defensively); it is asked to print its stack on stderr
    (:data:`STACK_SIGNAL`), then stopped, so that shutting the loader down does not wait
    for it.
    """
    key, timeout, workers = loader.key_path, loader.timeout, loader.num_workers
    owes = _owing_worker(batches)
    if owes is None:
        culprit, stack = f"none of its {workers} worker processes", ""
    else:
        worker_id, pid = owes
        culprit = f"worker {worker_id} of {workers} (pid {pid})"
        header = f"cadence: the Python stacks of {key}'s {culprit}, which owes the next batch:\n"
        stack = "; its Python stacks are printed above" if _dump_and_stop(pid, header) else ""
    return (
        f"{key}: {culprit} delivered no batch within {timeout:g} s ({key}.timeout={timeout:g})"
        f"{stack}. A worker is stuck or far too slow: look for blocking reads (a network file "
        "system, a remote store), locks or deadlocks in the dataset's __getitem__ and its "
        "transforms (e.g. OpenCV or BLAS threads in forked workers: "
        "env_cfg.mp_cfg.opencv_num_threads=0, or mp_start_method='spawn'); or raise "
        f"{key}.timeout (0 waits forever)"
    )


def _owing_worker(batches: Any) -> tuple[int, int] | None:
    """(worker id, pid) of the worker that owes torch's iterator its next batch, if known."""
    try:
        info = batches._task_info[batches._rcvd_idx]
        worker_id = int(info[0])
        return worker_id, int(batches._workers[worker_id].pid)
    except Exception:  # another torch, or an iterator that is not torch's
        return None


def _dump_and_stop(pid: int, header: str) -> bool:
    """Ask worker ``pid`` to print its stacks (:data:`STACK_SIGNAL`, which the workers of
    ``build_dataloader`` register), then stop it; whether it was asked.

    Stopped only where workers are shielded: they exit 0 on their parent's SIGTERM, which
    torch's SIGCHLD handler accepts (a worker killed by a signal makes it raise instead).
    """
    if STACK_SIGNAL is None:
        return False
    try:
        os.write(2, header.encode())  # the worker writes to the same stderr
        os.kill(pid, STACK_SIGNAL)
        time.sleep(0.2)  # the worker's C-level handler writes at once; leave it a moment
        if hasattr(signal, "sigwaitinfo"):
            os.kill(pid, signal.SIGTERM)  # the shutdown then need not wait for it
    except OSError:
        return False
    return True


__all__ = ["DEFAULT_LOADER_TIMEOUT", "DataLoaderTimeoutError", "ExplainedDataLoader",
           "explain_timeout"]  # fmt: skip
