"""Momentum schedulers on SGD's momentum and on Adam's betas[0], bare and wrapped."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch

from cadence.optim.scheduler import (
    ConstantMomentum,
    CosineAnnealingMomentum,
    CosineRestartMomentum,
    ExponentialMomentum,
    LinearMomentum,
    MultiStepMomentum,
    PolyMomentum,
    StepLR,
    StepMomentum,
    build_param_schedulers,
)


class StandInWrapper:
    """The part of an optimizer wrapper schedulers see: ``.optimizer`` and, with
    several groups, mmengine's extra pseudo group of base settings."""

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.optimizer = optimizer
        several = len(optimizer.param_groups) > 1
        self.base_param_settings = dict(optimizer.defaults, params=[]) if several else None

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        extra = [self.base_param_settings] if self.base_param_settings else []
        return self.optimizer.param_groups + extra


def params(groups: int = 1) -> list[dict[str, Any]]:
    return [{"params": [torch.nn.Parameter(torch.ones(3))]} for _ in range(groups)]


def momentum_sequence(optimizer: Any, scheduler: Any, steps: int, key: str) -> list[Any]:
    values = []
    for _ in range(steps):
        group = optimizer.param_groups[0]
        values.append(group["betas"][0] if key == "betas" else group[key])
        scheduler.step()
    return values


def test_step_momentum_on_sgd_formula() -> None:
    optimizer = torch.optim.SGD(params(), lr=0.1, momentum=0.9)
    got = momentum_sequence(
        optimizer, StepMomentum(optimizer, step_size=2, gamma=0.5), 7, "momentum"
    )
    assert got == pytest.approx([0.9 * 0.5 ** (k // 2) for k in range(7)], rel=1e-12)
    assert optimizer.param_groups[0]["initial_momentum"] == 0.9


def test_cosine_momentum_on_adam_moves_beta1_only() -> None:
    optimizer = torch.optim.Adam(params(), lr=1e-3, betas=(0.9, 0.99))
    scheduler = CosineAnnealingMomentum(optimizer, T_max=6, eta_min=0.5)
    got = momentum_sequence(optimizer, scheduler, 9, "betas")
    expected = [0.5 + 0.4 * (1 + math.cos(math.pi * k / 6)) / 2 for k in range(9)]
    # past T_max the chained cosine keeps following the curve (as torch's does)
    assert got == pytest.approx(expected, rel=1e-12)
    group = optimizer.param_groups[0]
    assert group["betas"][1] == 0.99
    assert group["momentum"] == group["betas"][0]
    assert scheduler.use_betas


def test_adam_still_steps_with_scheduled_betas() -> None:
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.95, 0.999))
    scheduler = LinearMomentum(optimizer, start_factor=0.5, end=4)
    before = model.weight.detach().clone()
    for _ in range(5):
        optimizer.zero_grad()
        model(torch.ones(2, 3)).sum().backward()
        optimizer.step()
        scheduler.step()
    assert not torch.equal(before, model.weight)
    assert optimizer.param_groups[0]["betas"] == pytest.approx((0.95, 0.999))


@pytest.mark.parametrize(
    ("factory", "formula"),
    [
        (lambda o: ConstantMomentum(o, factor=0.5, end=3), lambda k: 0.8 * (0.5 if k < 2 else 1)),
        (lambda o: ExponentialMomentum(o, gamma=0.9), lambda k: 0.8 * 0.9**k),
        (
            lambda o: MultiStepMomentum(o, milestones=[1, 3], gamma=0.5),
            lambda k: 0.8 * 0.5 ** sum(k >= m for m in (1, 3)),
        ),
        (
            lambda o: PolyMomentum(o, eta_min=0.1, power=1.0, end=5),
            lambda k: 0.1 + 0.7 * (1 - min(k, 4) / 4),
        ),
        (
            lambda o: CosineRestartMomentum(
                o, periods=[2, 3], restart_weights=[1, 0.5], eta_min=0.2
            ),
            lambda k: (
                0.2 + (0.8 - 0.2) * (1 + math.cos(math.pi * k / 2)) / 2
                if k < 2
                else 0.2 + (0.4 - 0.2) * (1 + math.cos(math.pi * (min(k, 4) - 2) / 3)) / 2
            ),
        ),
    ],
)
@pytest.mark.parametrize("adam", [False, True])
def test_momentum_families(factory: Any, formula: Any, adam: bool) -> None:
    if adam:
        optimizer: torch.optim.Optimizer = torch.optim.Adam(params(), betas=(0.8, 0.999))
    else:
        optimizer = torch.optim.SGD(params(), lr=0.1, momentum=0.8)
    got = momentum_sequence(optimizer, factory(optimizer), 7, "betas" if adam else "momentum")
    assert got == pytest.approx([formula(k) for k in range(7)], rel=1e-12)


def test_momentum_through_wrapper_updates_base_group_too() -> None:
    optimizer = torch.optim.Adam(params(2), lr=1e-3, betas=(0.9, 0.999))
    wrapper = StandInWrapper(optimizer)
    scheduler = StepMomentum(wrapper, step_size=1, gamma=0.5)
    scheduler.step()
    betas = [group["betas"] for group in wrapper.param_groups]
    assert betas == [(0.45, 0.999)] * 3
    assert scheduler.get_last_value() == [0.45] * 3


def test_lr_and_momentum_schedulers_coexist() -> None:
    optimizer = torch.optim.SGD(params(), lr=0.1, momentum=0.9)
    lr = StepLR(optimizer, step_size=1, gamma=0.5)
    momentum = StepMomentum(optimizer, step_size=1, gamma=0.9)
    for _ in range(3):
        lr.step()
        momentum.step()
    group = optimizer.param_groups[0]
    assert group["lr"] == pytest.approx(0.1 * 0.5**3)
    assert group["momentum"] == pytest.approx(0.9 * 0.9**3)


def test_momentum_scheduler_needs_momentum_or_betas() -> None:
    optimizer = torch.optim.Adagrad(params(), lr=0.1)
    with pytest.raises(ValueError, match="needs an optimizer with 'momentum'.*Adagrad"):
        StepMomentum(optimizer, step_size=2)


def test_build_momentum_scheduler_from_config() -> None:
    optimizer = torch.optim.Adam(params(), betas=(0.9, 0.999))
    (scheduler,) = build_param_schedulers(
        StandInWrapper(optimizer),
        [dict(type="LinearMomentum", start_factor=0.5, by_epoch=False, begin=0, end=3)],
    )
    assert isinstance(scheduler, LinearMomentum)
    assert optimizer.param_groups[0]["betas"] == (0.45, 0.999)
