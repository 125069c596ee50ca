"""Model FLOPs of a step (counted once) and the peak a device is measured against."""

from __future__ import annotations

import copy

import torch
from torch import nn

from cadence.utils.flops import PEAK_ENV, StepFlopCounter, peak_flops


class SingleDeviceStrategy:  # the counter goes by the strategy's class name
    pass


class FSDPStrategy:
    pass


def step(model: nn.Module, batch: int) -> None:
    model(torch.randn(batch, 8)).sum().backward()


def test_a_linear_step_counts_three_times_its_forward_products():
    counter, model = StepFlopCounter(), nn.Linear(8, 4)
    counter.start("SingleDeviceStrategy", compiled=False, module=model)
    step(model, 16)
    assert counter.stop() == 3 * 2 * 16 * 8 * 4  # forward 2*16*8*4; backward twice that
    assert counter.done and counter.stop() is None  # once
    step(model, 16)  # no longer counted: nothing left hooked on the model
    assert not model._forward_hooks and not model._forward_pre_hooks


def test_a_counted_step_computes_the_same_gradients_as_an_uncounted_one():
    # a backward pass under FlopCounterMode takes other kernels: the last bits of these
    # gradients differ when the counter also covers the backward
    torch.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.SiLU(),
                        nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.SiLU())  # fmt: skip
    x = torch.randn(4, 3, 16, 16)

    def gradients(counted: bool) -> list[torch.Tensor]:
        model = copy.deepcopy(net)
        counter = StepFlopCounter()
        if counted:
            counter.start("SingleDeviceStrategy", compiled=False, module=model)
        model(x).square().mean().backward()
        assert (counter.stop() is not None) == counted
        return [p.grad for p in model.parameters() if p.grad is not None]

    plain, counted = gradients(False), gradients(True)
    assert len(plain) == 8
    assert all(torch.equal(a, b) for a, b in zip(plain, counted))


def test_a_step_whose_model_never_runs_forward_counts_nothing():
    counter, model = StepFlopCounter(), nn.Linear(8, 4)
    counter.start("SingleDeviceStrategy", compiled=False, module=model)
    assert counter.stop() is None and counter.done


def test_sharded_or_compiled_steps_are_not_counted():
    model = nn.Linear(8, 4)
    counter = StepFlopCounter()
    counter.start("FSDPStrategy", compiled=False, module=model)
    assert counter.done and counter.stop() is None
    counter = StepFlopCounter()
    counter.start("SingleDeviceStrategy", compiled=True, module=model)
    assert counter.done and counter.stop() is None
    assert not model._forward_hooks


def test_peak_comes_from_the_environment_or_is_unknown_on_a_cpu(monkeypatch):
    monkeypatch.delenv(PEAK_ENV, raising=False)
    assert peak_flops("cpu") is None
    monkeypatch.setenv(PEAK_ENV, "1e12")
    assert peak_flops("cpu") == 1e12
