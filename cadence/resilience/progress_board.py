"""Where the ranks' hang watchdogs tell each other how far they are, without the process group.

A blocked collective blocks the default group, so the watchdogs share a side
channel instead: the c10d ``TCPStore`` that torchrun's agent (or rank 0, for
other launchers) already serves at ``MASTER_ADDR:MASTER_PORT``, through a client
connection of their own (:class:`StoreBoard`); where that store cannot be
reached, a folder that every rank sees (:class:`FileBoard`); for one process,
nothing (:class:`LocalBoard`).

Each watchdog posts its rank's entry every few seconds and learns two numbers:
a token that changes whenever some rank progressed, and how many ranks are
busy in a long section. Reading every rank's entry is done once, to report.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import time
from collections.abc import Mapping
from typing import Any, Protocol

import torch.distributed as torch_dist

Entry = dict[str, Any]


class ProgressBoard(Protocol):
    """What a hang watchdog posts to and reads from."""

    def post(self, entry: Mapping[str, Any], progressed: bool, busy: bool) -> tuple[int, int]:
        """Publish this rank's ``entry``; return (a token that changes whenever a rank
        posts ``progressed``, how many ranks are ``busy`` now)."""

    def entries(self) -> dict[int, Entry]:
        """Every rank's last entry (ranks that never posted are missing)."""

    def reported(self) -> None:
        """Say that this rank has written its hang report."""

    def wait_reported(self, timeout: float) -> int:
        """Wait up to ``timeout`` s until every rank has reported; how many have."""

    def close(self) -> None:
        """This rank's watchdog stops: it is busy no more."""


class LocalBoard:
    """The board of a single process: it only hears itself."""

    def __init__(self, rank: int = 0) -> None:
        self.rank = rank
        self._token = 0
        self._entry: Entry = {}

    def post(self, entry: Mapping[str, Any], progressed: bool, busy: bool) -> tuple[int, int]:
        """Remember ``entry``; the token counts this process's progress."""
        self._entry = dict(entry)
        self._token += int(progressed)
        return self._token, int(busy)

    def entries(self) -> dict[int, Entry]:
        """This process's entry."""
        return {self.rank: self._entry} if self._entry else {}

    def reported(self) -> None:
        """Nobody to tell."""

    def wait_reported(self, timeout: float) -> int:
        """Nobody to wait for."""
        return 1

    def close(self) -> None:
        """Nothing to release."""


class StoreBoard:
    """A board in a c10d store: keys ``rank/<r>`` (entries), counters ``progress``,
    ``busy`` and ``reported``, under a prefix of their own.

    Args:
        store: a store client that no other thread uses.
        rank, world_size: this process's place in the job.
    """

    def __init__(self, store: Any, rank: int, world_size: int) -> None:
        self.store = store
        self.rank = rank
        self.world_size = world_size
        self._busy = False

    @classmethod
    def connect(
        cls, host: str, port: int, rank: int, world_size: int, timeout: float, namespace: str
    ) -> StoreBoard:
        """A client of the store at ``host:port`` (the launcher's or rank 0's), its keys under
        ``cadence/hang/<namespace>/``; raises when the store cannot be reached in ``timeout`` s."""
        client = torch_dist.TCPStore(
            host, port, is_master=False, wait_for_workers=False,
            timeout=datetime.timedelta(seconds=timeout),
        )  # fmt: skip
        return cls(torch_dist.PrefixStore(f"cadence/hang/{namespace}/", client), rank, world_size)

    def post(self, entry: Mapping[str, Any], progressed: bool, busy: bool) -> tuple[int, int]:
        """Three store operations: set the entry, add to both counters."""
        self.store.set(f"rank/{self.rank}", json.dumps(dict(entry)))
        token = self.store.add("progress", int(progressed))
        busy_ranks = self.store.add("busy", int(busy) - int(self._busy))
        self._busy = busy
        return int(token), int(busy_ranks)

    def entries(self) -> dict[int, Entry]:
        """The entries of the ranks that posted one."""
        found: dict[int, Entry] = {}
        for rank in range(self.world_size):
            key = f"rank/{rank}"
            if self.store.check([key]):  # get() would wait for a missing key
                found[rank] = json.loads(self.store.get(key))
        return found

    def reported(self) -> None:
        """Count this rank among those that reported."""
        self.store.add("reported", 1)

    def wait_reported(self, timeout: float) -> int:
        """Poll the ``reported`` counter until it reaches the world size or time is up."""
        deadline = time.monotonic() + timeout
        while True:
            done = int(self.store.add("reported", 0))
            if done >= self.world_size or time.monotonic() >= deadline:
                return done
            time.sleep(0.05)

    def close(self) -> None:
        """Take this rank out of the busy count."""
        if self._busy:
            self.store.add("busy", -1)
            self._busy = False


class FileBoard:
    """A board in a folder every rank sees (a shared file system): ``rank<r>.json`` per rank
    (written whole, then renamed) and ``reported.<r>`` markers. Every post reads every
    rank's file, so it suits the fallback it is, not thousands of ranks."""

    def __init__(self, folder: str, rank: int, world_size: int) -> None:
        self.folder = folder
        self.rank = rank
        self.world_size = world_size
        self._progress = 0
        os.makedirs(folder, exist_ok=True)

    def _path(self, rank: int) -> str:
        return os.path.join(self.folder, f"rank{rank}.json")

    def _write(self, record: Mapping[str, Any]) -> None:
        path = self._path(self.rank)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w") as out:
            json.dump(dict(record), out)
        os.replace(temporary, path)

    def _records(self) -> dict[int, dict[str, Any]]:
        records = {}
        for rank in range(self.world_size):
            try:
                with open(self._path(rank)) as source:
                    records[rank] = json.load(source)
            except (OSError, ValueError):  # not posted yet
                continue
        return records

    def post(self, entry: Mapping[str, Any], progressed: bool, busy: bool) -> tuple[int, int]:
        """Write this rank's file; the token is the sum of every rank's progress count."""
        self._progress += int(progressed)
        self._write({"entry": dict(entry), "progress": self._progress, "busy": busy})
        records = self._records().values()
        return sum(r["progress"] for r in records), sum(bool(r["busy"]) for r in records)

    def entries(self) -> dict[int, Entry]:
        """The entries of the ranks whose file exists."""
        return {rank: record["entry"] for rank, record in self._records().items()}

    def reported(self) -> None:
        """Leave this rank's marker."""
        with open(os.path.join(self.folder, f"reported.{self.rank}"), "w"):
            pass

    def wait_reported(self, timeout: float) -> int:
        """Count the markers until all are there or time is up."""
        deadline = time.monotonic() + timeout
        while True:
            done = sum(
                os.path.exists(os.path.join(self.folder, f"reported.{r}"))
                for r in range(self.world_size)
            )
            if done >= self.world_size or time.monotonic() >= deadline:
                return done
            time.sleep(0.05)

    def close(self) -> None:
        """Post that this rank is busy no more."""
        records = self._records()
        mine = records.get(self.rank)
        if mine is not None and mine["busy"]:
            self._write({**mine, "busy": False})


def open_board(
    rank: int,
    world_size: int,
    *,
    folder: str | None,
    namespace: str,
    timeout: float,
    logger: logging.Logger | None = None,
) -> ProgressBoard:
    """The board for this job: none to share for one process; the store at
    ``MASTER_ADDR:MASTER_PORT`` where it answers within ``timeout`` s; else a
    :class:`FileBoard` in ``folder`` (with a warning), or the process alone without one."""
    if world_size <= 1:
        return LocalBoard(rank)
    host, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
    reason = "MASTER_ADDR/MASTER_PORT are not set"
    if host and port:
        try:
            return StoreBoard.connect(host, int(port), rank, world_size, timeout, namespace)
        except Exception as exc:  # a store that is gone or another init_method
            reason = f"the store at {host}:{port} does not answer ({exc})"
    fallback = "a folder in the log dir" if folder else "this rank's own progress only"
    if logger is not None:
        logger.warning(f"hang watchdog: {reason}; the ranks share their progress through "
                       f"{fallback}")  # fmt: skip
    if folder:
        return FileBoard(os.path.join(folder, namespace.replace("/", "_")), rank, world_size)
    return LocalBoard(rank)


__all__ = ["FileBoard", "LocalBoard", "ProgressBoard", "StoreBoard", "open_board"]
