"""LoggerHook: when it logs, and the console progress bar on terminals and elsewhere."""

from __future__ import annotations

import io
import sys
import types

import pytest
from runner_double import StandInRunner

from cadence.hooks import LoggerHook
from cadence.hooks import log_processor as log_processor_module
from cadence.hooks.log_processor import LogProcessor
from cadence.logging import MessageHub, get_logger
from cadence.logging import progress as progress_module


class FakeTerminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


class Visualizer:
    def __init__(self) -> None:
        self.steps: list[int] = []
        self.file_paths: list[str | None] = []

    def add_scalars(self, tag, step, file_path=None):
        self.steps.append(step)
        self.file_paths.append(file_path)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(progress_module, "perf_counter", fake)
    monkeypatch.setattr(log_processor_module, "_max_cuda_memory_mb", lambda runner: None)
    return fake


def make_runner(*, by_epoch: bool, iters: int, epoch_len: int = 100, max_epochs: int = 1,
                val_interval: int = 0, rank: int = 0):  # fmt: skip
    train_loop = types.SimpleNamespace(
        dataloader=list(range(epoch_len)), val_interval=val_interval, inner_iter=0
    )
    val_loop = types.SimpleNamespace(dataloader=list(range(3))) if val_interval else None
    return StandInRunner(
        iter=0, epoch=0, max_iters=iters, max_epochs=max_epochs, train_loop=train_loop,
        val_loop=val_loop, test_loop=None, train_loop_by_epoch=by_epoch,
        message_hub=MessageHub("logger_hook"), logger=get_logger("logger_hook_test"),
        log_processor=LogProcessor(by_epoch=by_epoch, window_size=1), visualizer=Visualizer(),
        experiment_name="exp", rank=rank, world_size=1,
    )  # fmt: skip


def train_step(hook, runner, clock, batch_idx: int) -> None:
    hub = runner.message_hub
    hub.update_scalar("train/lr", 0.01)
    hub.update_scalar("train/loss", 1.0 / (runner.iter + 1))
    hub.update_scalar("train/time", 0.5)
    hub.update_scalar("train/data_time", 0.1)
    hub.update_info("eta", 0.5 * (runner.max_iters - runner.iter - 1))
    clock.now += 0.5
    hook.after_train_iter(runner, batch_idx=batch_idx)
    runner.iter += 1


def validate(hook, runner, clock) -> None:
    hub = runner.message_hub
    hook.before_val_epoch(runner)
    for batch in range(3):
        hub.update_scalar("val/time", 0.2)
        hub.update_scalar("val/data_time", 0.1)
        clock.now += 0.2
        hook.after_val_iter(runner, batch_idx=batch)
    hub.update_scalar("val/accuracy", 0.75)
    hook.after_val_epoch(runner, metrics={"accuracy": 0.75})


def train(hook, runner, clock, *, validate_at: tuple[int, ...] = ()) -> None:
    hook.before_run(runner)
    hook.before_train(runner)
    for epoch in range(runner.max_epochs):
        runner.epoch = epoch
        hook.before_train_epoch(runner)
        batches = len(runner.train_loop.dataloader) if runner.train_loop_by_epoch else None
        for batch_idx in range(batches or runner.max_iters):
            train_step(hook, runner, clock, batch_idx)
            if runner.iter in validate_at:
                validate(hook, runner, clock)
        hook.after_train_epoch(runner)
    hook.after_train(runner)
    hook.after_run(runner)


def log_lines(text: str) -> list[str]:
    """The iteration and metric lines (not the start and end-of-training summaries)."""
    lines = [line.split(" - INFO - ", 1)[1] for line in text.splitlines() if " - INFO - " in line]
    return [line for line in lines if line.startswith(("Epoch(", "Iter(", "Exp name"))]


def test_iteration_based_lines_every_interval(clock, monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    runner = make_runner(by_epoch=False, iters=10)
    hook = LoggerHook(interval=3, interval_exp_name=4)
    train(hook, runner, clock)
    lines = log_lines(sys.stdout.getvalue())
    headers = [line.split("  ")[0] for line in lines]
    assert headers == [
        "Iter(train) [ 3/10]", "Exp name: exp", "Iter(train) [ 6/10]", "Exp name: exp",
        "Iter(train) [ 9/10]",
    ]  # fmt: skip
    assert "loss: 0.3333" in lines[0]  # 1/3 at the third iteration, window 1
    assert runner.visualizer.steps == [3, 6, 9]
    assert runner.visualizer.file_paths == ["logs.json"] * 3  # <log dir name>.json


@pytest.mark.parametrize(("ignore_last", "expected"), [(True, [3, 6]), (False, [3, 6, 7])])
def test_epoch_based_lines_and_the_last_short_interval(clock, monkeypatch, ignore_last, expected):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    runner = make_runner(by_epoch=True, iters=7, epoch_len=7)
    train(runner=runner, hook=LoggerHook(interval=3, ignore_last=ignore_last), clock=clock)
    lines = log_lines(sys.stdout.getvalue())
    assert [line.split("  ")[0] for line in lines] == [f"Epoch(train) [1][{n}/7]" for n in expected]


def test_redirected_output_has_plain_lines_only(clock, monkeypatch):
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    runner = make_runner(by_epoch=True, iters=8, epoch_len=4, max_epochs=2, val_interval=1)
    hook = LoggerHook(interval=2)  # progress='auto'
    train(hook, runner, clock, validate_at=(4, 8))
    text = sys.stdout.getvalue()
    assert hook._bar is None
    assert "\x1b[" not in text
    # per epoch: two train lines; then validation: one iteration line (batch 2) and its metrics
    assert len(log_lines(text)) == 2 * (2 + 2)


def test_terminal_shows_a_bar_with_speed_eta_and_loss(clock, monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    runner = make_runner(by_epoch=True, iters=8, epoch_len=4, max_epochs=2, val_interval=1)
    hook = LoggerHook(interval=2)  # progress='auto'
    train(hook, runner, clock, validate_at=(4, 8))
    assert sys.stdout is terminal  # given back after the run
    text = terminal.getvalue()
    assert "\x1b[" in text
    assert "Epoch 1/2" in text and "Epoch 2/2" in text
    assert "4/4" in text
    assert "2.0 it/s" in text  # 0.5 s per iteration
    assert "loss: 0.1250" in text  # the latest loss, 1/8, on the final frame
    assert "Val" in text
    assert "Epoch(train) [1][2/4]" in text  # log lines still appear
    assert not hook._bar.active


def test_off_and_other_ranks_never_draw(clock, monkeypatch):
    for hook, rank in ((LoggerHook(interval=2, progress="off"), 0),
                       (LoggerHook(interval=2, progress="bar"), 1)):  # fmt: skip
        terminal = FakeTerminal()
        monkeypatch.setattr(sys, "stdout", terminal)
        train(hook, make_runner(by_epoch=False, iters=4, rank=rank), clock)
        assert hook._bar is None
        assert "\x1b[" not in terminal.getvalue()
        assert len(log_lines(terminal.getvalue())) == 2


def test_iteration_windows_end_at_validation(clock, monkeypatch):
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    runner = make_runner(by_epoch=False, iters=10, val_interval=4)
    train(LoggerHook(interval=5, progress="bar"), runner, clock, validate_at=(4, 8))
    text = terminal.getvalue()
    for window in ("Iter 1-4/10", "Iter 5-8/10", "Iter 9-10/10"):
        assert window in text
    assert "Iter 1-10/10" not in text


def test_bar_redraws_are_throttled_to_five_a_second(clock, monkeypatch):
    monkeypatch.setattr(sys, "stdout", FakeTerminal())
    runner = make_runner(by_epoch=False, iters=3000)
    hook = LoggerHook(interval=1000, progress="bar")
    hook.before_run(runner)
    hook.before_train(runner)
    hook.before_train_epoch(runner)
    hub = runner.message_hub
    for batch_idx in range(3000):
        hub.update_scalar("train/loss", 0.5)
        clock.now += 0.001  # 1000 it/s: 3 s in all
        hook.after_train_iter(runner, batch_idx=batch_idx)
        runner.iter += 1
    hook.after_train(runner)
    assert 14 <= hook._bar.redraws <= 18  # 3 s at <= 5 Hz, plus first and last frames


def test_bad_settings_are_explained():
    with pytest.raises(ValueError, match="Did you mean 'off'"):
        LoggerHook(progress="of")
    with pytest.raises(ValueError, match="positive int"):
        LoggerHook(interval=0)
    with pytest.raises(ValueError, match="interval_exp_name"):
        LoggerHook(interval_exp_name=-1)


def test_the_log_file_keeps_every_loss_term_and_timing_and_the_console_every_loss(tmp_path, capsys):
    import glob

    import mmengine_toy

    mmengine_toy.run("epoch", str(tmp_path), 0, train_cfg=dict(
        by_epoch=True, max_epochs=1, val_interval=3),
        log_processor=dict(by_epoch=True, max_width=60))  # fmt: skip
    (log,) = glob.glob(str(tmp_path / "*" / "*.log"))
    with open(log) as f:
        lines = [line for line in f if "Epoch(train) [1][8/8]" in line]
    assert len(lines) == 1
    for item in ("time: ", "data_time: ", "loss: ", "loss_cls: ", "loss_reg: "):
        assert item in lines[0]
    console = capsys.readouterr().out
    start = console.index("Epoch(train) [1][8/8]")
    shown = console[start : console.index("\n", console.index("loss_reg", start))]
    assert "loss: " in shown and "loss_cls: " in shown  # wrapped, not hidden
    assert all(len(row) <= 60 for row in shown.split("\n"))
