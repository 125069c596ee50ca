"""What a checkpoint holds besides weights (RNG streams of every rank), the
``last_checkpoint`` pointer, finding checkpoints, background writing, and the
public :func:`load_checkpoint`."""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from ..strategies.checkpoint_io import (
    CheckpointError,
    fsync_dir,
    load_state_dict_into,
    manifest_path,
    read_checkpoint,
)
from ..utils.rng import rng_state, set_rng_state

LAST_CHECKPOINT = "last_checkpoint"


# ------------------------------------------------------------------ RNG streams
def gather_rng_states() -> dict[str, Any]:
    """Every rank's RNG streams, gathered on all ranks: ``{'world_size', 'ranks': [...]}``.

    Every rank of the job must call this (it is a collective when distributed).
    """
    from ..dist import all_gather_object

    states = all_gather_object(rng_state())
    return {"world_size": len(states), "ranks": states}


def restore_rng_states(
    saved: dict[str, Any], rank: int, world_size: int, logger: Any = None
) -> None:
    """Give this rank back its own saved RNG streams.

    When the world size changed, ranks that existed before restore their own
    streams and new ranks keep the streams seeded at start-up (a warning says so).
    A single-process checkpoint of an older layout (one state) restores on every rank.
    """
    if "ranks" not in saved:
        set_rng_state(saved)
        return
    states = list(saved["ranks"])
    if len(states) != world_size:
        message = (
            f"the checkpoint holds the RNG streams of {len(states)} rank(s) but this run has "
            f"{world_size}: ranks below {min(len(states), world_size)} restore their own "
            "streams, the others keep the streams seeded at start-up"
        )
        warnings.warn(message, stacklevel=2)
        if logger is not None:
            logger.warning(message)
    if rank < len(states):
        set_rng_state(states[rank])


def rank_local_buffers(module: nn.Module) -> dict[str, torch.Tensor]:
    """This rank's non-parameter buffers (BatchNorm statistics...), as CPU copies.

    Sharded engines (FSDP2, DeepSpeed) save one rank's copy of buffers that are
    not sharded although each rank updates its own; DTensor buffers are left to them.
    """
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:  # pragma: no cover - torch without DTensor
        DTensor = ()  # type: ignore[assignment,misc]  # noqa: N806
    return {
        name: buffer.detach().to("cpu", copy=True)
        for name, buffer in module.named_buffers()
        if not isinstance(buffer, DTensor)
    }


def restore_rank_local_buffers(module: nn.Module, saved: dict[str, torch.Tensor]) -> None:
    """Copy what :func:`rank_local_buffers` saved on this rank back into ``module``."""
    own = dict(module.named_buffers())
    with torch.no_grad():
        for name, value in saved.items():
            if name in own and own[name].shape == value.shape:
                own[name].copy_(value)


# ------------------------------------------------------------ pointer, finding
def write_last_checkpoint(work_dir: str, path: str) -> None:
    """Point ``work_dir/last_checkpoint`` at ``path`` (atomically and durably)."""
    os.makedirs(work_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=work_dir, prefix=".last-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(path)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(work_dir, LAST_CHECKPOINT))
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(work_dir)


def _pointer_target(work_dir: str) -> str | None:
    pointer = os.path.join(work_dir, LAST_CHECKPOINT)
    if not os.path.isfile(pointer):
        return None
    with open(pointer) as f:
        path = f.read().strip()
    if path and not os.path.isabs(path):
        path = os.path.join(work_dir, path)
    return path or None


def find_latest_checkpoint(work_dir: str) -> str | None:
    """The checkpoint ``work_dir/last_checkpoint`` points at, if it still exists."""
    path = _pointer_target(work_dir)
    return path if path and os.path.isfile(path) else None


def checkpoint_candidates(work_dir: str) -> list[str]:
    """Checkpoints to resume from, best first: the pointer's target, then the other
    checkpoints with a manifest in its folder and in ``work_dir``, newest first
    (``best_*`` checkpoints, written without optimizer state, are left out)."""
    first = find_latest_checkpoint(work_dir)
    folders = {os.path.abspath(work_dir)}
    target = _pointer_target(work_dir)
    if target:
        folders.add(os.path.dirname(os.path.abspath(target)))
    found: list[tuple[int, str]] = []
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            path = os.path.join(folder, name)
            if name.startswith(("best_", ".")) or not os.path.isfile(manifest_path(path)):
                continue
            if os.path.isfile(path) and path != first:
                found.append((os.stat(path).st_mtime_ns, path))
    ordered = [path for _, path in sorted(found, reverse=True)]
    return ([first] if first else []) + ordered


# --------------------------------------------------------- background writes
class AsyncCheckpointWriter:
    """Runs one checkpoint write at a time on a background thread.

    :meth:`wait` blocks until the current write is done and raises its error,
    if any, as a :class:`CheckpointError`; an error is also logged the moment
    it happens, so it is never lost.
    """

    def __init__(self, logger: Any = None) -> None:
        self.logger = logger or logging.getLogger("cadence")
        self._thread: threading.Thread | None = None
        self._error: tuple[str, BaseException] | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def submit(self, job: Callable[[], None], what: str) -> None:
        """Wait for the previous write, then start ``job`` (writing ``what``)."""
        self.wait()
        self._thread = threading.Thread(
            target=self._run, args=(job, what), name="cadence-checkpoint-writer", daemon=False
        )
        self._thread.start()

    def _run(self, job: Callable[[], None], what: str) -> None:
        try:
            job()
        except BaseException as e:  # noqa: BLE001 - handed to the training thread
            self._error = (what, e)
            self.logger.error(f"writing checkpoint {what} in the background failed: {e!r}")

    def wait(self) -> None:
        """Block until no write is running; raise the error of the last one, if any."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            what, error = self._error
            self._error = None
            raise CheckpointError(
                f"writing checkpoint {what} in the background failed: {error!r}"
            ) from error


# ------------------------------------------------------------------ loading
def load_checkpoint(
    model: nn.Module,
    filename: str,
    map_location: str | torch.device = "cpu",
    strict: bool = False,
    revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
) -> dict[str, Any]:
    """Load the weights of ``filename`` into ``model``; return the whole checkpoint.

    The file is checked against its manifest and read with
    ``torch.load(weights_only=True)``; keys are rewritten with ``revise_keys``
    (regex, replacement) pairs (by default a DDP ``module.`` prefix is dropped).
    """
    checkpoint = read_checkpoint(filename, map_location)
    load_state_dict_into(getattr(model, "module", model), checkpoint, strict, revise_keys)
    return checkpoint
