"""IterTimerHook with a hand-driven clock: data_time, time and the ETA after resuming."""

from __future__ import annotations

import types

import pytest
from runner_double import StandInRunner

from cadence.hooks import IterTimerHook
from cadence.hooks import iter_timer_hook as timer_module
from cadence.hooks import log_processor as log_processor_module
from cadence.hooks.log_processor import LogProcessor
from cadence.logging import MessageHub


class Clock:
    """A clock the test moves by hand; counts its reads."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(timer_module, "perf_counter", fake)
    monkeypatch.setattr(log_processor_module, "_max_cuda_memory_mb", lambda runner: None)
    return fake


def make_runner(hub: MessageHub, *, iter: int, max_iters: int, val_batches: int = 4):
    loop = types.SimpleNamespace(dataloader=list(range(100)))
    return StandInRunner(
        iter=iter, epoch=0, max_iters=max_iters, max_epochs=1, message_hub=hub,
        train_loop=loop, val_loop=types.SimpleNamespace(dataloader=list(range(val_batches))),
        test_loop=None, world_size=1, rank=0,
    )  # fmt: skip


def train_iteration(hook, runner, clock, data: float, compute: float) -> None:
    clock.now += data
    hook.before_train_iter(runner, batch_idx=0)
    clock.now += compute
    hook.after_train_iter(runner, batch_idx=0)
    runner.iter += 1


def resumed_hub() -> MessageHub:
    """A hub as loaded from a checkpoint of a slower, earlier process."""
    hub = MessageHub("resumed")
    for _ in range(10):
        hub.update_scalar("train/time", 2.0)
        hub.update_scalar("train/data_time", 1.0)
    hub.update_info("eta", 12345.0)
    return hub


def test_eta_right_after_resuming_uses_only_this_process(clock):
    hub = resumed_hub()
    runner = make_runner(hub, iter=90_000, max_iters=100_000)
    hook = IterTimerHook()
    hook.before_train(runner)
    hook.before_train_epoch(runner)
    train_iteration(hook, runner, clock, data=0.1, compute=0.4)
    # one iteration of 0.5 s, 100000 - 90001 = 9999 left
    assert hub.get_info("eta") == pytest.approx(0.5 * 9_999)
    for _ in range(9):
        train_iteration(hook, runner, clock, data=0.1, compute=0.4)
    assert hub.get_info("eta") == pytest.approx(0.5 * 9_990)  # 4995 s
    assert hub.get_scalar("train/time").current() == pytest.approx(0.5)
    assert hub.get_scalar("train/data_time").current() == pytest.approx(0.1)

    processor = LogProcessor(by_epoch=False, window_size=10)
    runner.iter -= 1  # the logger runs after the 10th iteration, before the loop counts it
    _, line = processor.get_log_after_iter(runner, 9, "train")
    assert "Iter(train) [ 90010/100000]" in line
    assert "eta: 1:23:15" in line  # 4995 s
    assert "time: 0.5000  data_time: 0.1000" in line


def test_two_clock_reads_per_training_iteration(clock):
    hub = MessageHub("reads")
    runner = make_runner(hub, iter=0, max_iters=100)
    hook = IterTimerHook()
    hook.before_train(runner)
    hook.before_train_epoch(runner)
    before = clock.reads
    for _ in range(5):
        train_iteration(hook, runner, clock, data=0.01, compute=0.02)
    assert clock.reads - before == 10


def test_validation_eta_and_no_validation_time_in_the_next_data_time(clock):
    hub = MessageHub("val")
    runner = make_runner(hub, iter=0, max_iters=100, val_batches=4)
    hook = IterTimerHook()
    hook.before_train(runner)
    hook.before_train_epoch(runner)
    train_iteration(hook, runner, clock, data=0.1, compute=0.9)
    assert hub.get_info("eta") == pytest.approx(1.0 * 99)

    hook.before_val_epoch(runner)
    for batch in range(2):
        clock.now += 0.05
        hook.before_val_iter(runner, batch_idx=batch)
        clock.now += 0.2
        hook.after_val_iter(runner, batch_idx=batch)
    assert hub.get_scalar("val/time").current() == pytest.approx(0.25)
    assert hub.get_scalar("val/data_time").current() == pytest.approx(0.05)
    assert hub.get_info("eta") == pytest.approx(0.25 * 2)  # two of four batches left
    clock.now += 30.0  # evaluating and saving after the last batch
    hook.after_val(runner)

    clock.now += 0.1
    hook.before_train_iter(runner, batch_idx=1)
    assert hub.get_scalar("train/data_time").current() == pytest.approx(0.1)
    clock.now += 0.9
    hook.after_train_iter(runner, batch_idx=1)
    assert hub.get_scalar("train/time").current() == pytest.approx(1.0)
    assert hub.get_info("eta") == pytest.approx(1.0 * 98)  # validation is not training time


def test_test_loop_times_and_unknown_length(clock):
    hub = MessageHub("test")
    loader = types.SimpleNamespace(__len__=None)
    runner = make_runner(hub, iter=0, max_iters=10)
    runner.test_loop = types.SimpleNamespace(dataloader=loader)  # len() raises TypeError
    hook = IterTimerHook()
    hook.before_test_epoch(runner)
    clock.now += 0.5
    hook.before_test_iter(runner, batch_idx=0)
    clock.now += 1.5
    hook.after_test_iter(runner, batch_idx=0)
    assert hub.get_scalar("test/data_time").current() == pytest.approx(0.5)
    assert hub.get_scalar("test/time").current() == pytest.approx(2.0)
    assert hub.get_info("eta") is None  # no length, no estimate
