"""A live console progress bar that costs a counter increment per iteration.

:class:`ProgressBar` draws a `rich <https://github.com/Textualize/rich>`_ bar
(description, bar, done/total, it/s, time left, extra text such as the latest
loss) and redraws it at most ``max_refresh_hz`` times per second. Between
redraws, :meth:`ProgressBar.tick` only counts: it does not even read the
clock, because it learns how many iterations fit in one refresh period.

While a bar is shown, everything printed to ``sys.stdout``/``sys.stderr``
(log lines included) appears above it. rich is imported only when a bar starts.
"""

from __future__ import annotations

import atexit
import sys
import weakref
from time import perf_counter
from typing import Any

from ..utils.suggest import did_you_mean

#: ``progress`` settings: a bar only on a terminal, always a bar, never a bar.
PROGRESS_MODES = ("auto", "bar", "off")

_live_bars: weakref.WeakSet[ProgressBar] = weakref.WeakSet()


def check_progress_mode(mode: Any) -> str:
    """Return ``mode`` if it is one of :data:`PROGRESS_MODES`, else raise ``ValueError``."""
    if mode not in PROGRESS_MODES:
        raise ValueError(
            f"progress must be one of {', '.join(repr(m) for m in PROGRESS_MODES)}, got "
            f"{mode!r}.{did_you_mean(str(mode), PROGRESS_MODES)}"
        )
    return str(mode)


def is_terminal(stream: Any = None) -> bool:
    """Whether ``stream`` (default: the current ``sys.stdout``) is an interactive terminal."""
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (ValueError, OSError):  # a closed or detached stream
        return False


def wants_bar(mode: str, rank: int = 0, stream: Any = None) -> bool:
    """Whether to show a bar: only on rank 0; ``'auto'`` only when the console is a terminal."""
    mode = check_progress_mode(mode)
    if rank != 0 or mode == "off":
        return False
    return mode == "bar" or is_terminal(stream)


def stop_live_bars() -> None:
    """Stop every bar still shown (the terminal gets its cursor and plain lines back)."""
    for bar in list(_live_bars):
        bar.stop()


atexit.register(stop_live_bars)  # give the cursor back if a run dies with a bar shown


def _default_console() -> Any:
    """A console on ``sys.stdout`` that always draws, as wide as the terminal; printed lines
    are not re-wrapped."""
    import shutil

    from rich.console import Console

    return Console(force_terminal=True, soft_wrap=True, width=shutil.get_terminal_size().columns)


def _clock_text(seconds: float | None) -> str:
    if seconds is None:
        return "-:--:--"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


#: The most characters of the bar itself; it shrinks to leave room for the text.
BAR_WIDTH = 30
_MIN_BAR_WIDTH = 5
#: Weight of the newest measurement in the displayed speed (exponential smoothing).
_SMOOTHING = 0.3


class ProgressBar:
    """One bar at a time on the console; redraws throttled to ``max_refresh_hz``.

    Args:
        max_refresh_hz: the most redraws per second.
        console: a ``rich.console.Console`` to draw on (default: one on
            ``sys.stdout`` that always emits terminal control sequences).

    Use: :meth:`start` a bar, call :meth:`tick` once per iteration and
    :meth:`show` when it returns True, :meth:`stop` at the end. The bar is one
    line of text (description, bar, done/total, it/s, elapsed, time left,
    extra text), cheap to redraw: a redraw, and each line printed while the
    bar is shown, costs well under a millisecond.
    """

    def __init__(self, max_refresh_hz: float = 5.0, console: Any = None) -> None:
        if not max_refresh_hz > 0:
            raise ValueError(f"max_refresh_hz must be positive, got {max_refresh_hz!r}")
        self._period = 1.0 / max_refresh_hz
        self._console = console
        self._live: Any = None
        self.description = ""
        self.total: int | None = None
        self.completed = 0
        self.redraws = 0
        self._countdown = 1
        self._rate = 0.0  # iterations per second between the last two checks (throttling)
        self._speed: float | None = None  # smoothed iterations per second (display, eta)
        self._started_at = 0.0
        self._drawn_at = 0.0
        self._drawn_count = 0
        self._extra = ""
        self._eta: float | None = None
        self._width: int | None = None

    @property
    def active(self) -> bool:
        """Whether a bar is shown now."""
        return self._live is not None

    @property
    def finished(self) -> bool:
        """Whether the bar reached its total (never, when the total is unknown)."""
        return self.total is not None and self.completed >= self.total

    def start(
        self, description: str, total: int | None, completed: int = 0, transient: bool = False
    ) -> None:
        """Show a new bar (stopping the current one); ``total=None`` when unknown.

        A ``transient`` bar disappears when stopped; the others stay on screen.
        """
        from rich.live import Live

        self.stop()
        self.description = description
        self.total = total if total is None else max(int(total), 0)
        self.completed = self._drawn_count = int(completed)
        self._rate, self._speed, self._countdown, self._extra = 0.0, None, 1, ""
        self._eta = None
        self._started_at = self._drawn_at = perf_counter()
        console = self._console if self._console is not None else _default_console()
        self._width = getattr(console, "width", None)
        self._live = Live(self.render(), console=console, auto_refresh=False, transient=transient)
        self._live.start(refresh=True)
        self.redraws += 1
        _live_bars.add(self)

    def tick(self) -> bool:
        """Count one iteration; True when it is time to call :meth:`show`."""
        self.completed += 1
        self._countdown -= 1
        return self._countdown <= 0 or self.completed == self.total

    def show(self, extra: str = "", eta: float | None = None) -> None:
        """Redraw with the current count and ``extra`` text, unless the last redraw is too recent.

        ``eta``: the seconds left to show (e.g. the whole run's, as the log prints it)
        instead of this bar's own estimate. The last iteration of a bar is always drawn.
        """
        if self._live is None:
            return
        now = perf_counter()
        waited = now - self._drawn_at
        done = self.completed - self._drawn_count
        if waited > 0 and done > 0:
            self._rate = done / waited
        if waited < self._period * 0.98 and not self.finished:  # 2% slack for clock jitter
            self._countdown = max(1, int(self._rate * (self._period - waited)))
            return
        if done > 0 and waited > 0:
            old = self._speed
            self._speed = self._rate if old is None else old + _SMOOTHING * (self._rate - old)
        self._countdown = max(1, int(self._rate * self._period))
        self._extra, self._eta = extra, eta
        self._drawn_at, self._drawn_count = now, self.completed
        self._live.update(self.render(now), refresh=True)
        self.redraws += 1

    def render(self, now: float | None = None) -> Any:
        """The bar as one line of ``rich.text.Text``."""
        from rich.text import Text

        total, done, speed = self.total, self.completed, self._speed
        elapsed = (perf_counter() if now is None else now) - self._started_at
        if total:
            counts = f"{done}/{total}"
            left = (total - done) / speed if speed else None
        else:
            counts, left = f"{done}/?", None
        if self._eta is not None:
            left = self._eta
        rate = "? it/s" if speed is None else f"{speed:.1f} it/s"
        tail = f" {counts} {rate} {_clock_text(elapsed)} eta {_clock_text(left)} {self._extra}"
        width = BAR_WIDTH
        if self._width:  # leave the text its room on the terminal's line
            room = self._width - len(self.description) - 1 - len(tail.rstrip())
            width = max(_MIN_BAR_WIDTH, min(BAR_WIDTH, room))
        filled = min(width, width * done // total) if total else 0
        return Text.assemble(
            (self.description, "bold"),
            " ",
            ("\u2501" * filled, "magenta"),
            ("\u2501" * (width - filled), "bright_black"),
            tail.rstrip(),
            no_wrap=True,
            overflow="ellipsis",
        )

    def stop(self) -> None:
        """Draw the final state and take the bar off the live display (no-op without one)."""
        live = self._live
        if live is None:
            return
        self._live = None
        _live_bars.discard(self)
        live.update(self.render(), refresh=False)
        live.stop()


def format_loss(value: Any) -> str:
    """``'loss: 0.1234'`` for a number, ``''`` for None."""
    return "" if value is None else f"loss: {value:.4f}"
