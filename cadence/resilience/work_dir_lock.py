"""One training run per work dir: a lock file naming its holder.

``train()`` takes ``<work_dir>/.cadence.lock`` (host, pid, start time, run name)
before it reads or writes checkpoints and gives it back when it returns or
raises. A second run in the same work dir stops with
:class:`WorkDirLockedError` (``cadence train`` exits 2) naming the holder. A lock
whose holder is gone (same host, no such process) is taken over with a warning;
a holder on another host cannot be checked, so the message says how to remove
the lock. With several processes rank 0 holds it for all.

A job that a launcher restarted (``torchrun --max-restarts``, a requeued SLURM job)
finds the lock of its previous attempt, whose rank 0 may have run on another host:
the lock records the attempt (:func:`cadence.resilience.cluster.current_attempt`), and an
earlier attempt of the same job is taken over wherever it ran (the launcher ends an
attempt before it starts the next).
"""

from __future__ import annotations

import glob
import json
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from .cluster import Attempt, current_attempt

LOCK_NAME = ".cadence.lock"
#: Temporary files a killed save leaves behind (removed once the lock is held).
TEMP_PATTERNS = (".ckpt-*.tmp", ".manifest-*.tmp", ".last-*.tmp", ".publish-*.tmp")


class WorkDirLockedError(RuntimeError):
    """Another run holds the work dir."""


class EarlierRunError(WorkDirLockedError):
    """A new run would overwrite the checkpoints an earlier run left in its work dir."""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return True


class WorkDirLock:
    """The lock of one work dir, held by this process between :meth:`acquire` and
    :meth:`release`."""

    def __init__(self, work_dir: str, attempt: Attempt | None = None) -> None:
        self.work_dir = work_dir
        self._attempt = attempt
        self.path = os.path.join(work_dir, LOCK_NAME)
        self.held = False

    def acquire(self, run: str | None) -> str | None:
        """Take the lock (raise :class:`WorkDirLockedError` if a live run holds it); return a
        warning to log when a stale lock was taken over."""
        os.makedirs(self.work_dir, exist_ok=True)
        attempt = self._attempt if self._attempt is not None else current_attempt()
        me = {"host": socket.gethostname(), "pid": os.getpid(),
              "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "run": run,
              "attempt": attempt.as_record()}  # fmt: skip
        warning = None
        for _ in range(3):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
            except FileExistsError:
                holder = self._holder()
                stale = self._stale(holder, me, attempt)
                if stale is None:
                    raise WorkDirLockedError(self._in_use(holder)) from None
                warning = stale
                try:
                    os.remove(self.path)
                except FileNotFoundError:
                    pass
                continue
            with os.fdopen(fd, "w") as f:
                json.dump(me, f)
            self.held = True
            return warning
        raise WorkDirLockedError(f"could not take the lock {self.path}: it keeps reappearing")

    def release(self) -> None:
        """Give the lock back (if this process holds it)."""
        if self.held:
            self.held = False
            holder = self._holder()
            if holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
                try:
                    os.remove(self.path)
                except FileNotFoundError:
                    pass

    def remove_temporary_files(self, folders: list[str]) -> list[str]:
        """Delete the temporary files a killed save left in ``folders`` (lock held)."""
        removed = []
        for folder in dict.fromkeys(folders):
            for pattern in TEMP_PATTERNS:
                for path in glob.glob(os.path.join(glob.escape(folder), pattern)):
                    try:
                        os.remove(path)
                        removed.append(path)
                    except OSError:
                        pass
        return removed

    def _holder(self) -> dict[str, Any]:
        try:
            with open(self.path) as f:
                holder = json.load(f)
            return holder if isinstance(holder, dict) else {}
        except (OSError, ValueError):
            return {}

    def _stale(self, holder: dict[str, Any], me: dict[str, Any], attempt: Attempt) -> str | None:
        """Why the lock may be taken over, or None while its holder may be running."""
        if not holder:
            return f"took over the unreadable lock {self.path} (a run that died writing it)"
        if holder.get("host") != me["host"]:
            if attempt.follows(holder.get("attempt")):
                return (f"took over the lock {self.path} of run {holder.get('run')} (pid "
                        f"{holder.get('pid')} on {holder.get('host')}), the previous attempt "
                        f"of this job ({attempt.describe()})")  # fmt: skip
            return None
        pid = int(holder.get("pid", -1))
        if pid == me["pid"]:
            return None if self.held else ""  # an earlier runner of this process left it
        if pid > 0 and _alive(pid):
            return None
        return (f"took over the lock {self.path} of run {holder.get('run')} (pid {pid}, "
                f"started {holder.get('started')}), which is no longer running")  # fmt: skip

    def _in_use(self, holder: dict[str, Any]) -> str:
        return (
            f"work dir {self.work_dir} is in use by another training run: {holder.get('run')} "
            f"on {holder.get('host')}, pid {holder.get('pid')}, started "
            f"{holder.get('started')} (lock {self.path}). Wait for it to end, train in "
            f"another work dir (--work-dir), or, if that run is gone (another host cannot be "
            f"checked from here), delete {self.path}"
        )


def lock_for_training(
    lock: WorkDirLock,
    rank: int,
    world_size: int,
    run: str | None,
    logger: Any,
    refuse: Callable[[], str | None] | None = None,
    pointed_at: Callable[[str], str | None] | None = None,
) -> None:
    """Rank 0 takes ``lock``, clears temporary files of killed saves (in the work dir and
    in the folder of the checkpoint that ``pointed_at(work_dir)`` names, if any) and asks
    ``refuse`` whether the run may write there (a reason not to, or None); every rank raises
    :class:`WorkDirLockedError` if another run holds the lock, :class:`EarlierRunError`
    (the lock given back) for a refusal (a collective)."""
    message: tuple[bool, str] | None = None
    if rank == 0:
        try:
            warning = lock.acquire(run)
        except WorkDirLockedError as e:
            message = (False, str(e))
        else:
            if warning:
                logger.warning(warning)
            target = pointed_at(lock.work_dir) if pointed_at is not None else None
            folders = [lock.work_dir] + ([os.path.dirname(target)] if target else [])
            for path in lock.remove_temporary_files(folders):
                logger.warning(f"Removed {path}, left by a save that was killed")
            reason = refuse() if refuse is not None else None
            if reason is not None:
                lock.release()
                message = (True, reason)
    if world_size > 1:
        from ..dist import broadcast_object_list

        box = [message]
        broadcast_object_list(box, src=0)
        message = box[0]
    if message is not None:
        earlier, text = message
        raise (EarlierRunError if earlier else WorkDirLockedError)(text)
