"""A wall-clock timer usable as a context manager (mmengine's ``Timer``)."""

from __future__ import annotations

from collections.abc import Callable
from time import time
from types import TracebackType


class TimerError(Exception):
    """A ``Timer`` was read before it was started."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class Timer:
    """Measures seconds since start and since the last check.

    As a context manager it prints the elapsed seconds on exit, formatted with
    ``print_tmpl`` (default ``'{:.3f}'``). ``clock`` (seconds; ``time.time`` by default,
    a cadence addition) is read at each start and check: tests pass a fake one.
    """

    def __init__(
        self,
        start: bool = True,
        print_tmpl: str | None = None,
        *,
        clock: Callable[[], float] = time,
    ) -> None:
        self._clock = clock
        self._is_running = False
        self.print_tmpl = print_tmpl if print_tmpl else "{:.3f}"
        self._t_start = self._t_last = 0.0
        if start:
            self.start()

    @property
    def is_running(self) -> bool:
        """Whether the timer has been started."""
        return self._is_running

    def __enter__(self) -> Timer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        print(self.print_tmpl.format(self.since_last_check()))
        self._is_running = False

    def start(self) -> None:
        """Start the timer (a running timer keeps its start time)."""
        if not self._is_running:
            self._t_start = self._clock()
            self._is_running = True
        self._t_last = self._clock()

    def since_start(self) -> float:
        """Seconds since the timer started; also marks a check."""
        if not self._is_running:
            raise TimerError("timer is not running")
        self._t_last = self._clock()
        return self._t_last - self._t_start

    def since_last_check(self) -> float:
        """Seconds since the last check (or since the start); marks a new check."""
        if not self._is_running:
            raise TimerError("timer is not running")
        now = self._clock()
        elapsed, self._t_last = now - self._t_last, now
        return elapsed


_timers: dict[str, Timer] = {}


def check_time(timer_id: str) -> float:
    """Seconds since the previous call with the same ``timer_id`` (``0`` on the first call)."""
    if timer_id not in _timers:
        _timers[timer_id] = Timer()
        return 0.0
    return _timers[timer_id].since_last_check()
