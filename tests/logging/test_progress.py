"""ProgressBar: renders on a (fake) terminal, redraws at most max_refresh_hz times a second."""

from __future__ import annotations

import io
import sys

import pytest
from rich.console import Console

from cadence.logging import progress as progress_module
from cadence.logging.progress import (
    ProgressBar,
    check_progress_mode,
    format_loss,
    is_terminal,
    wants_bar,
)


class FakeTerminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(progress_module, "perf_counter", fake)
    return fake


def terminal_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=True, width=120), out


def test_modes_are_checked_with_suggestions():
    assert [check_progress_mode(m) for m in ("auto", "bar", "off")] == ["auto", "bar", "off"]
    with pytest.raises(ValueError, match="Did you mean 'bar'"):
        check_progress_mode("bars")
    with pytest.raises(ValueError, match="'auto', 'bar', 'off'"):
        check_progress_mode(True)


def test_bar_only_on_rank_zero_and_auto_only_on_a_terminal():
    tty, plain = FakeTerminal(), io.StringIO()
    assert is_terminal(tty) and not is_terminal(plain)
    assert wants_bar("auto", 0, tty)
    assert not wants_bar("auto", 0, plain)
    assert wants_bar("bar", 0, plain)
    assert not wants_bar("off", 0, tty)
    assert not wants_bar("bar", 1, tty)  # other ranks never draw


def test_auto_follows_the_current_stdout(monkeypatch):
    monkeypatch.setattr(sys, "stdout", FakeTerminal())
    assert wants_bar("auto")
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert not wants_bar("auto")


def test_bar_renders_description_counts_speed_and_extra_text(clock):
    console, out = terminal_console()
    bar = ProgressBar(console=console)
    bar.start("Epoch 1/3", total=20)
    for _ in range(20):
        clock.now += 0.5  # slow iterations: every one is drawn
        if bar.tick():
            bar.show(format_loss(0.25))
    bar.stop()
    text = out.getvalue()
    assert "\x1b[" in text  # terminal control sequences
    assert "Epoch 1/3" in text
    assert "20/20" in text
    assert "loss: 0.2500" in text
    assert "2.0 it/s" in text  # one iteration per 0.5 s
    assert bar.redraws == 21  # the first frame, then each of the 20 iterations
    assert not bar.active


def test_redraws_at_most_ten_times_a_second_without_reading_the_clock_each_iteration(clock):
    console, _ = terminal_console()
    bar = ProgressBar(max_refresh_hz=10, console=console)
    bar.start("Iter 1-5000/5000", total=5000)
    checks = 0
    for _ in range(5000):
        clock.now += 0.001  # 1000 it/s for 5 s
        if bar.tick():
            checks += 1
            bar.show()
    bar.stop()
    assert bar.completed == 5000
    # 5 s at <= 10 Hz, plus the first frame and the final one
    assert 45 <= bar.redraws <= 52
    # between redraws tick() only counts: the clock is looked at on few iterations
    assert checks < 80, checks


def test_unknown_total_never_finishes(clock):
    console, out = terminal_console()
    bar = ProgressBar(console=console)
    bar.start("Val", total=None)
    for _ in range(3):
        clock.now += 1.0
        if bar.tick():
            bar.show()
    assert bar.completed == 3 and not bar.finished
    bar.stop()
    bar.stop()  # a second stop does nothing
    assert "Val" in out.getvalue()


def test_start_position_and_finished(clock):
    console, out = terminal_console()
    bar = ProgressBar(console=console)
    bar.start("Epoch 2/2", total=10, completed=7)  # resumed mid-epoch
    for _ in range(3):
        clock.now += 1.0
        bar.tick()
    assert bar.finished
    bar.show()
    bar.stop()
    assert "10/10" in out.getvalue()


def test_prints_during_a_bar_appear_and_stdout_is_restored(clock):
    console, out = terminal_console()
    before = sys.stdout
    bar = ProgressBar(console=console)
    bar.start("Epoch 1/1", total=2)
    assert sys.stdout is not before  # rich routes prints above the bar
    print("a log line")
    bar.stop()
    assert sys.stdout is before
    assert "a log line" in out.getvalue()


def test_bad_refresh_rate():
    with pytest.raises(ValueError, match="positive"):
        ProgressBar(max_refresh_hz=0)


def test_format_loss():
    assert format_loss(None) == ""
    assert format_loss(1.23456) == "loss: 1.2346"


def test_bar_fits_the_console_width_and_shows_the_given_eta(clock):
    out = io.StringIO()
    bar = ProgressBar(console=Console(file=out, force_terminal=True, width=70))
    bar.start("Epoch 1/3", total=20, transient=True)
    clock.now += 0.5
    bar.tick()
    bar.show("loss: 0.5000", eta=3725.0)  # the run's eta (the log's), not this bar's
    line = bar.render().plain
    assert len(line) == 70 and line.endswith("eta 1:02:05 loss: 0.5000")
    assert line.count("\u2501") == 13  # the bar shrank to leave the text its room
    wide = ProgressBar(console=Console(file=io.StringIO(), force_terminal=True, width=200))
    wide.start("Epoch 1/3", total=20)
    assert wide.render().plain.count("\u2501") == 30  # BAR_WIDTH at most
    bar.stop()
    wide.stop()
