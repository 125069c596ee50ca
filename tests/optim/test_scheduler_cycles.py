"""OneCycle (against torch's OneCycleLR and the phase formulas) and CosineRestart."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from torch.optim import lr_scheduler as torch_sched

from cadence.optim.scheduler import (
    CosineRestartLR,
    CosineRestartParamScheduler,
    OneCycleLR,
    OneCycleParamScheduler,
)


def make_sgd(lrs: tuple[float, ...] = (0.1,)) -> torch.optim.SGD:
    groups = [{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr} for lr in lrs]
    return torch.optim.SGD(groups, lr=lrs[0], momentum=0.9)


def lr_sequence(optimizer: Any, scheduler: Any, steps: int, group: int = 0) -> list[float]:
    values = []
    for _ in range(steps):
        values.append(optimizer.param_groups[group]["lr"])
        optimizer.step()
        scheduler.step()
    return values


# ------------------------------------------------------------------ OneCycle
@pytest.mark.parametrize("three_phase", [False, True])
@pytest.mark.parametrize("strategy", ["cos", "linear"])
def test_one_cycle_equals_torch(three_phase: bool, strategy: str) -> None:
    kwargs = dict(total_steps=30, pct_start=0.25, anneal_strategy=strategy, three_phase=three_phase)
    ours_opt = make_sgd()
    ours = OneCycleLR(ours_opt, eta_max=0.8, div_factor=10.0, final_div_factor=100.0, **kwargs)
    theirs_opt = make_sgd()
    theirs = torch_sched.OneCycleLR(
        theirs_opt, max_lr=0.8, div_factor=10.0, final_div_factor=100.0,
        cycle_momentum=False, **kwargs,
    )  # fmt: skip
    assert lr_sequence(ours_opt, ours, 30) == lr_sequence(theirs_opt, theirs, 30)


def test_one_cycle_two_phase_formula_and_group_keys() -> None:
    total, pct, peak = 20, 0.3, 1.0
    optimizer = make_sgd((0.1, 0.2))
    scheduler = OneCycleLR(optimizer, eta_max=[peak, 2 * peak], total_steps=total, pct_start=pct)
    for group, top in enumerate((peak, 2 * peak)):
        keys = optimizer.param_groups[group]
        assert keys["initial_lr"] == pytest.approx(top / 25)
        assert keys["max_lr"] == top
        assert keys["min_lr"] == pytest.approx(top / 25 / 1e4)
    got = lr_sequence(optimizer, scheduler, total, group=1)
    top = 2 * peak
    start, low, up_end = top / 25, top / 25 / 1e4, pct * total - 1
    for step, lr in enumerate(got):
        if step <= up_end:
            a, b, frac = start, top, step / up_end
        else:
            a, b, frac = top, low, (step - up_end) / (total - 1 - up_end)
        expected = b + (a - b) / 2 * (1 + math.cos(math.pi * frac))
        assert lr == pytest.approx(expected, rel=1e-12), step
    assert got[-1] == pytest.approx(low)


def test_one_cycle_total_steps_defaults_to_window_and_overrun_raises() -> None:
    optimizer = make_sgd()
    scheduler = OneCycleLR(optimizer, eta_max=1.0, begin=0, end=10, total_steps=None)
    assert scheduler.total_steps == 10
    bounded = OneCycleLR(make_sgd(), eta_max=1.0, total_steps=3)
    for _ in range(3):
        bounded.step()
    with pytest.raises(ValueError, match="total_steps is 3"):
        bounded.step()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(total_steps=0), "total_steps must be a positive int"),
        (dict(total_steps=10, pct_start=1.5), "pct_start must be a number in"),
        (dict(total_steps=10, anneal_strategy="cosine"), "anneal_strategy must be"),
        (dict(total_steps=10, eta_max=[1.0, 2.0]), "expected 1 values of eta_max"),
    ],
)
def test_one_cycle_rejects_bad_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        OneCycleLR(make_sgd(), **{"eta_max": 1.0, **kwargs})


def test_one_cycle_only_schedules_lr() -> None:
    with pytest.raises(ValueError, match="only schedules 'lr'"):
        OneCycleParamScheduler(make_sgd(), "momentum", eta_max=1.0, total_steps=5)


def test_one_cycle_converted_from_epochs() -> None:
    scheduler = OneCycleLR.build_iter_from_epoch(
        make_sgd(), eta_max=1.0, total_steps=4, epoch_length=5
    )
    assert (scheduler.total_steps, scheduler.by_epoch) == (20, False)


# -------------------------------------------------------------- CosineRestart
def restart_formula(
    step: int, base: float, periods: list[int], weights: list[float], low: float
) -> float | None:
    start = 0
    for period, weight in zip(periods, weights):
        if step < start + period:
            peak = base * weight
            return low + (peak - low) * (1 + math.cos(math.pi * (step - start) / period)) / 2
        start += period
    return None


def test_cosine_restart_formula_then_frozen() -> None:
    periods, weights, low = [4, 6, 5], [1.0, 0.6, 0.3], 0.005
    optimizer = make_sgd()
    scheduler = CosineRestartLR(optimizer, periods=periods, restart_weights=weights, eta_min=low)
    got = lr_sequence(optimizer, scheduler, 20)
    last = restart_formula(14, 0.1, periods, weights, low)
    for step, lr in enumerate(got):
        expected = restart_formula(step, 0.1, periods, weights, low)
        assert lr == pytest.approx(last if expected is None else expected, rel=1e-12), step


def test_cosine_restart_eta_min_ratio_and_begin() -> None:
    periods, weights = [3, 3], [1.0, 0.5]
    optimizer = make_sgd((0.1, 0.3))
    scheduler = CosineRestartLR(
        optimizer, periods=periods, restart_weights=weights, eta_min_ratio=0.1, begin=2
    )
    got = lr_sequence(optimizer, scheduler, 8, group=1)
    for step, lr in enumerate(got):
        expected = 0.3 if step < 2 else restart_formula(step - 2, 0.3, periods, weights, 0.03)
        assert lr == pytest.approx(expected, rel=1e-12), step


def test_cosine_restart_position_lookup() -> None:
    lookup = CosineRestartParamScheduler.get_position_from_periods
    assert [lookup(i, [100, 200, 300]) for i in (0, 99, 100, 250, 299, 300)] == [
        0, 0, 1, 2, 2, None,
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(periods=[3]), "one of eta_min or eta_min_ratio is required"),
        (dict(periods=[3], eta_min=0.0, eta_min_ratio=0.1), "not both"),
        (dict(periods=[3, 4], eta_min=0.0), "same length"),
        (dict(periods=[3, 0], restart_weights=[1, 1], eta_min=0.0), "must be positive"),
    ],
)
def test_cosine_restart_rejects_bad_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        CosineRestartLR(make_sgd(), **kwargs)


def test_cosine_restart_periods_converted_from_epochs() -> None:
    scheduler = CosineRestartLR.build_iter_from_epoch(
        make_sgd(), periods=[2, 3], restart_weights=[1, 0.5], eta_min=0.0, epoch_length=4
    )
    assert scheduler.periods == [8, 12]
    assert scheduler.cumulative_periods == [8, 20]
