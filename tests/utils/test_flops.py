"""Model FLOPs of a step (counted once) and the peak a device is measured against."""

from __future__ import annotations

import torch
from torch import nn

from cadence.utils.flops import PEAK_ENV, StepFlopCounter, peak_flops


class SingleDeviceStrategy:  # the counter goes by the strategy's class name
    pass


class FSDPStrategy:
    pass


def step(model: nn.Module, batch: int) -> None:
    model(torch.randn(batch, 8)).sum().backward()


def test_a_linear_step_counts_forward_and_backward_products():
    counter = StepFlopCounter()
    counter.start("SingleDeviceStrategy", compiled=False)
    step(nn.Linear(8, 4), 16)
    # forward 2*16*8*4; backward: the weight's gradient (2*4*16*8) only, the input needs none
    assert counter.stop() == 2 * 16 * 8 * 4 * 2
    assert counter.done and counter.stop() is None  # once


def test_sharded_or_compiled_steps_are_not_counted():
    counter = StepFlopCounter()
    counter.start("FSDPStrategy", compiled=False)
    assert counter.done and counter.stop() is None
    counter = StepFlopCounter()
    counter.start("SingleDeviceStrategy", compiled=True)
    assert counter.done and counter.stop() is None


def test_peak_comes_from_the_environment_or_is_unknown_on_a_cpu(monkeypatch):
    monkeypatch.delenv(PEAK_ENV, raising=False)
    assert peak_flops("cpu") is None
    monkeypatch.setenv(PEAK_ENV, "1e12")
    assert peak_flops("cpu") == 1e12
