"""The generic ``*ParamScheduler``s on a parameter other than lr/momentum (weight decay), with
the values written from mmengine's documented formulas; ``end`` is exclusive and the window's
last step is ``end - begin - 1``."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from cadence.optim.scheduler import (
    ConstantParamScheduler,
    ExponentialParamScheduler,
    LinearParamScheduler,
    MultiStepParamScheduler,
    PolyParamScheduler,
)

WD = 0.1
LR = 0.01


def make_sgd() -> torch.optim.SGD:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=LR, weight_decay=WD)


def wd_sequence(optimizer: torch.optim.SGD, scheduler: Any, steps: int) -> list[float]:
    """weight_decay in effect at each step (optimizer stepped before the scheduler)."""
    values = []
    for _ in range(steps):
        values.append(optimizer.param_groups[0]["weight_decay"])
        optimizer.step()
        scheduler.step()
    return values


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        # factor 0.5 on steps 0 and 1 (end=3), then the value is restored
        (lambda o: ConstantParamScheduler(o, "weight_decay", factor=0.5, end=3),
         [0.05, 0.05, 0.1, 0.1, 0.1]),
        (lambda o: ExponentialParamScheduler(o, "weight_decay", gamma=0.5),
         [0.1, 0.05, 0.025, 0.0125]),
        # factor from 0.5 to 1.0 over steps 0..2 (end=3)
        (lambda o: LinearParamScheduler(o, "weight_decay", start_factor=0.5, end=3),
         [0.05, 0.075, 0.1, 0.1]),
        (lambda o: MultiStepParamScheduler(o, "weight_decay", milestones=[1, 3], gamma=0.1),
         [0.1, 0.01, 0.01, 0.001, 0.001]),
        # (v0 - eta_min) * (1 - t / 4) ** 1 + eta_min for t = 0..4 (end=5), then kept
        (lambda o: PolyParamScheduler(o, "weight_decay", eta_min=0.0, power=1.0, end=5),
         [0.1, 0.075, 0.05, 0.025, 0.0, 0.0]),
    ],
)  # fmt: skip
def test_generic_scheduler_drives_the_named_parameter_only(
    make: Any, expected: list[float]
) -> None:
    optimizer = make_sgd()
    scheduler = make(optimizer)
    assert wd_sequence(optimizer, scheduler, len(expected)) == pytest.approx(expected, abs=1e-12)
    group = optimizer.param_groups[0]
    assert group["lr"] == LR  # lr untouched
    assert group["initial_weight_decay"] == WD
