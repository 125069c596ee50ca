"""See caught signals from a thread: a grace period and a second signal that ends the process.

Python runs a signal handler only when the main thread executes Python code
again. A main thread blocked in C (a collective waiting for a peer that is gone,
a stuck read) therefore never learns about a SIGTERM, and since a handler is
installed, the signal no longer ends the process either: the job lingers until
the launcher kills it. :class:`SignalWatch` closes that gap. It registers a
pipe as Python's signal wake-up descriptor (``signal.set_wakeup_fd``): the
interpreter's C-level handler writes each caught signal's number there at
once, whatever the main thread is doing, and a daemon thread reads it:

* after the first signal, the main thread must reach an iteration boundary
  (:meth:`progress`) or begin the save (:meth:`saving`) within
  ``grace_period`` seconds, or the process exits with ``128 + signum``;
* a later signal (one of ``signals``, at least ``duplicate_window`` seconds
  after the first) exits the process at once with ``128 + signum``;
* either way the reason is written to stderr and to the log before
  ``os._exit``; no checkpoint is saved (a save in progress leaves only
  temporary files, removed by the next run).

Repeats within ``duplicate_window`` are one request: a launcher that relays the
signal it got (torchrun, a ``--nproc`` parent) while the group signal reaches
the process too delivers the same request twice within milliseconds.
"""

from __future__ import annotations

import logging
import os
import select
import signal
import threading
import time
from collections.abc import Callable, Sequence

from ..utils.exit_codes import signal_code
from .fatal import exit_now

_STOP = 0  # no signal has number 0: the byte that tells the thread to end


class SignalWatch:
    """A daemon thread that watches ``signals`` while the main thread trains.

    Args:
        signals: the signal numbers that ask the run to stop.
        grace_period: seconds the main thread may take to reach the next
            iteration boundary after the first signal; ``None``: no limit.
        duplicate_window: repeats within this many seconds of the first signal
            count as that signal.
        iteration: the iteration the main thread is in (1-based, as logged);
            called from the watch thread.
        logger: also gets the exit message (stderr always does).
        label: begins the message (e.g. ``'rank 1'``) when not empty.
    """

    def __init__(
        self,
        signals: Sequence[int],
        grace_period: float | None,
        duplicate_window: float,
        iteration: Callable[[], int],
        logger: logging.Logger | None = None,
        label: str = "",
    ) -> None:
        self.signals = frozenset(signals)
        self.grace_period = grace_period
        self.duplicate_window = duplicate_window
        self.iteration = iteration
        self.logger = logger
        self.label = label
        self._lock = threading.Lock()
        self._first: tuple[int, float, int] | None = None  # signum, time, iteration
        self._deadline: float | None = None
        self._saving = False
        self._fds: tuple[int, int] | None = None
        self._previous_fd = -1
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------ main thread
    def start(self) -> None:
        """Begin watching (call from the main thread)."""
        read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        self._previous_fd = signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        self._fds = (read_fd, write_fd)
        self._thread = threading.Thread(target=self._run, name="cadence-signal-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop watching and give the wake-up descriptor back (main thread)."""
        if self._fds is None:
            return
        read_fd, write_fd = self._fds
        signal.set_wakeup_fd(self._previous_fd)
        os.write(write_fd, bytes([_STOP]))
        if self._thread is not None:
            self._thread.join(timeout=5)
        os.close(read_fd)
        os.close(write_fd)
        self._fds, self._thread = None, None

    def progress(self) -> None:
        """An iteration boundary was reached after the signal: the grace period starts over."""
        with self._lock:
            if self._deadline is not None and self.grace_period is not None:
                self._deadline = time.monotonic() + self.grace_period

    def saving(self) -> None:
        """The preemption checkpoint is being written: no grace limit, a second signal ends."""
        with self._lock:
            self._saving, self._deadline = True, None

    # ------------------------------------------------------ watch thread
    def _run(self) -> None:
        assert self._fds is not None
        read_fd = self._fds[0]
        while True:
            with self._lock:
                deadline = self._deadline
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([read_fd], [], [], timeout)
            if not ready:
                self._check_deadline()
                continue
            data = os.read(read_fd, 512)
            if self._previous_fd >= 0:  # keep the previous owner (an event loop) informed
                try:
                    os.write(self._previous_fd, data)
                except OSError:
                    pass
            for signum in data:
                if signum == _STOP:
                    return
                if signum in self.signals:
                    self._arrived(signum)

    def _arrived(self, signum: int) -> None:
        now = time.monotonic()
        with self._lock:
            if self._first is None:
                self._first = (signum, now, self.iteration())
                if not self._saving and self.grace_period is not None:
                    self._deadline = now + self.grace_period
                return
            first, at, iteration = self._first
            if now - at < self.duplicate_window:
                return
            saving = self._saving
        what = (
            f"a second {_name(signum)}, {now - at:.1f} s after the {_name(first)} received in "
            f"iteration {iteration}"
        )
        if saving:
            what += ", came while the preemption checkpoint was being written"
        code = signal_code(signum)
        self._exit(signum, f"{what}: exiting now with code {code}; no checkpoint was saved")

    def _check_deadline(self) -> None:
        with self._lock:
            if self._deadline is None or time.monotonic() < self._deadline or self._first is None:
                return
            signum, at, iteration = self._first
        self._exit(
            signum,
            f"{_name(signum)} received in iteration {iteration}; iteration {self.iteration()} "
            f"did not finish within the grace period of {self.grace_period:g} s (grace_period; "
            "a peer may be gone or a collective blocked): exiting with code "
            f"{signal_code(signum)} {time.monotonic() - at:.1f} s after the signal; no checkpoint "
            "was saved",
        )

    def _exit(self, signum: int, message: str) -> None:
        """Write ``message`` to stderr and the log, then end the process with ``128 + signum``."""
        who = f"cadence ({self.label})" if self.label else "cadence"
        exit_now(
            signal_code(signum),
            f"{who}: {message}; --resume continues from the last checkpoint",
            self.logger,
        )


def _name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"
