"""The hang watchdog: end a job in which no rank has made progress for ``timeout`` seconds.

A rank stuck in a blocked collective or a dataloader deadlock otherwise waits
for the process group's timeout (30 minutes by default) and then fails naming
neither the rank nor the iteration. :class:`HangWatchdog` is a daemon thread
per rank. Every ``interval`` seconds it reads the run's
:class:`~cadence.resilience.heartbeat.Heartbeat` (which the loops bump at each step
boundary, and where the phase of the step is marked: fetching data, a hook,
forward, backward, optimizer step...) and posts it to a
:class:`~cadence.resilience.progress_board.ProgressBoard` shared by the ranks outside
the process group. When for ``timeout`` seconds no rank progressed (or, while
every rank is busy in a long section such as a checkpoint save, for
:data:`BUSY_FACTOR` times that), every rank writes to stderr and the log which
ranks are behind and where, then its own Python stacks (all threads), and exits with
:data:`HANG_EXIT_CODE`. The ranks wait a moment for each other's reports
before exiting, so that a launcher which stops the job when the first rank
exits does not cut the stuck rank's stacks short.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Mapping, Sequence

from ..utils.exit_codes import ExitCode, report
from .fatal import python_stacks, say
from .heartbeat import Heartbeat
from .progress_board import Entry, LocalBoard, ProgressBoard

#: The exit code of a process the hang watchdog ends (distinct from errors, 1, usage
#: errors and a taken work dir, 2, and signals, 128 + N).
HANG_EXIT_CODE = int(ExitCode.HANG)  # the table: cadence/utils/exit_codes.py
#: ``env_cfg.dist_cfg.hang_timeout`` with several processes when the config does not set it.
DEFAULT_HANG_TIMEOUT = 600.0
#: While every rank is busy (a checkpoint save, the metric computation) the job counts as
#: moving for this many times ``hang_timeout``; then it is stuck there too.
BUSY_FACTOR = 3


def poll_interval(timeout: float) -> float:
    """Seconds between two looks at the heartbeat: a tenth of ``timeout``, 0.1 to 10 s."""
    return min(max(timeout / 10, 0.1), 10.0)


class HangWatchdog:
    """A daemon thread that ends the process when no rank progressed for ``timeout`` s.

    Args:
        timeout: seconds without progress anywhere that make a hang (> 0).
        heartbeat: the run's heartbeat, bumped by its loops.
        open_board: makes the board shared with the other ranks (called in the thread,
            so that connecting never blocks training).
        rank, world_size: this process's place in the job.
        logger: also gets the report (stderr always does).
        setting: the config key of ``timeout``, named in the report.
        clock, wait: the monotonic seconds it reads and how it waits between two looks
            (``wait(seconds)`` returns True to stop); :meth:`stop` ends the default wait.
            Tests pass a fake clock and a wait that moves it.
    """

    def __init__(
        self,
        timeout: float,
        heartbeat: Heartbeat,
        open_board: Callable[[], ProgressBoard],
        *,
        rank: int = 0,
        world_size: int = 1,
        logger: logging.Logger | None = None,
        setting: str = "env_cfg.dist_cfg.hang_timeout",
        clock: Callable[[], float] = time.monotonic,
        wait: Callable[[float], bool] | None = None,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"{setting} must be > 0 to watch, got {timeout!r}")
        self.timeout = float(timeout)
        self.interval = poll_interval(self.timeout)
        self.heartbeat = heartbeat
        self.open_board = open_board
        self.rank = rank
        self.world_size = world_size
        self.logger = logger
        self.setting = setting
        self.host = socket.gethostname()
        self._stop = threading.Event()
        self._clock = clock
        self._wait = wait if wait is not None else self._stop.wait
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------ main thread
    def start(self) -> None:
        """Begin watching."""
        self._stop.clear()
        if self._thread is None:
            self.heartbeat.watchers += 1  # the training loop marks its steps from now on
        self._thread = threading.Thread(target=self._run, name="cadence-hang-watchdog", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching; returns once the thread has ended (or after a stuck store call)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.interval + 15)
            self._thread = None
            self.heartbeat.watchers -= 1

    # ------------------------------------------------------ watch thread
    def _run(self) -> None:
        try:
            board = self.open_board()
        except Exception as exc:
            board = self._alone(exc)
        try:
            self._watch(board)
        finally:
            try:
                board.close()
            except Exception:  # the store may be gone at the end of a run
                pass

    def _alone(self, exc: BaseException) -> ProgressBoard:
        if self.logger is not None:
            self.logger.warning(
                f"hang watchdog (rank {self.rank}): the other ranks' progress is unknown from "
                f"now on ({type(exc).__name__}: {exc}); this rank watches its own"
            )
        return LocalBoard(self.rank)

    def _entry(self, busy: bool) -> Entry:
        beat = self.heartbeat
        return {"host": self.host, "pid": os.getpid(), "order": beat.order(), "busy": busy,
                "where": beat.describe()}  # fmt: skip

    def _watch(self, board: ProgressBoard) -> None:
        beat = self.heartbeat
        seen = beat.token()
        latest_seen: int | None = None
        changed_at = self._clock()
        busy_since: float | None = None  # when every rank became busy (None: not all are)
        while not self._wait(self.interval):
            mark, busy = beat.token(), beat.busy_depth > 0
            progressed, seen = mark != seen, mark
            entry = self._entry(busy)
            try:
                latest, busy_ranks = board.post(entry, progressed, busy)
            except Exception as exc:  # the store went away: keep watching this rank
                board = self._alone(exc)
                latest, busy_ranks = board.post(entry, progressed, busy)
            now = self._clock()
            if progressed or latest != latest_seen:
                latest_seen, changed_at, busy_since = latest, now, None
            elif busy_ranks >= self.world_size:  # all busy: moving, for a while
                changed_at = now
                busy_since = now if busy_since is None else busy_since
                if now - busy_since >= BUSY_FACTOR * self.timeout and not self._stop.is_set():
                    self._report(board, now - busy_since, busy=True)
            else:
                busy_since = None
                if now - changed_at >= self.timeout and not self._stop.is_set():
                    self._report(board, now - changed_at)

    def _report(self, board: ProgressBoard, silent_for: float, busy: bool = False) -> None:
        """Say which ranks are behind, dump this rank's stacks, wait for the others, exit.

        ``busy``: every rank has been in a busy section for ``silent_for`` s."""
        try:
            entries = board.entries()
        except Exception:
            entries = {}
        mine = self._entry(self.heartbeat.busy_depth > 0)
        entries[self.rank] = mine
        several = self.world_size > 1
        who = f"rank {self.rank} of {self.world_size}, " if several else ""
        label = f"cadence ({who}host {self.host}, pid {mine['pid']})"
        subject = "no rank made progress" if several else "the run made no progress"
        limit = f"{self.setting}={self.timeout:g}"
        if busy:
            subject = f"every rank has been busy ({self.heartbeat.busy_with or 'a long section'})"
            limit = f"{BUSY_FACTOR} x {limit}"
        summary = f" {describe_ranks(entries, self.world_size)}" if several else ""
        message = (
            f"{label}: {subject} for {silent_for:.1f} s ({limit}): "
            f"{'the job' if several else 'it'} is stuck.{summary} This rank is {mine['where']}; "
            "its Python stacks follow"
            f"{' (each rank prints its own)' if several else ''}. Exiting with code "
            f"{HANG_EXIT_CODE}; --resume continues from the last checkpoint."
        )
        prefix = f"[rank {self.rank}] " if several else ""
        stacks = "".join(f"{prefix}{line}\n" for line in python_stacks().splitlines())
        say(f"{message}\n{prefix}Python stacks, {mine['where']}:\n{stacks}", self.logger)
        try:
            board.reported()
            board.wait_reported(min(max(3 * self.interval, 2.0), 15.0))
        except Exception:
            pass
        report(HANG_EXIT_CODE)
        os._exit(HANG_EXIT_CODE)


def describe_ranks(entries: Mapping[int, Entry], world_size: int) -> str:
    """Which ranks are behind (fewer steps; at equal steps, at an earlier phase of the step
    or hook of its stage, or not in a busy section or collective where the others wait),
    the furthest behind first, and where each group of ranks is."""
    order = {rank: tuple(map(int, e["order"])) for rank, e in entries.items()}
    parts = []
    if order:
        front = max(order.values())
        behind = sorted((rank for rank in order if order[rank] < front),
                        key=lambda rank: (order[rank], rank))  # fmt: skip
        ahead = [rank for rank in sorted(order) if order[rank] == front]
        if behind:
            parts.append(f"Behind: {_where(behind, entries)}.")
            parts.append(f"Ahead of {'it' if len(behind) == 1 else 'them'}: "
                         f"{_where(ahead, entries)}.")  # fmt: skip
        else:
            parts.append(f"No rank is behind the others: {_where(ahead, entries)}.")
    missing = [rank for rank in range(world_size) if rank not in entries]
    if missing:
        parts.append(f"No progress ever posted by {_ranks(missing)} (not started, or stuck "
                     "before its loop began).")  # fmt: skip
    return " ".join(parts)


def _where(ranks: Sequence[int], entries: Mapping[int, Entry]) -> str:
    """``'rank 1 (host h, pid 7) in iteration 3; ranks 0, 2-5 in iteration 4'``."""
    groups: dict[str, list[int]] = {}
    for rank in ranks:
        groups.setdefault(str(entries[rank]["where"]), []).append(rank)
    said = []
    for where, members in groups.items():
        if len(members) == 1:
            entry = entries[members[0]]
            said.append(f"rank {members[0]} (host {entry['host']}, pid {entry['pid']}) {where}")
        else:
            hosts = sorted({str(entries[r]["host"]) for r in members})
            on = ", ".join(hosts[:3]) + (f" and {len(hosts) - 3} more" if len(hosts) > 3 else "")
            said.append(f"{_ranks(members)} (on {on}) {where}")
    return "; ".join(said)


def _ranks(ranks: Sequence[int]) -> str:
    """``'rank 3'`` or ``'ranks 0, 2-5'``."""
    spans: list[list[int]] = []
    for rank in sorted(ranks):
        if spans and rank == spans[-1][1] + 1:
            spans[-1][1] = rank
        else:
            spans.append([rank, rank])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
    return f"rank {text}" if len(ranks) == 1 else f"ranks {text}"


__all__ = ["BUSY_FACTOR", "DEFAULT_HANG_TIMEOUT", "HANG_EXIT_CODE", "HangWatchdog",
           "describe_ranks", "poll_interval"]  # fmt: skip
