"""Learning-rate schedulers against torch's schedulers and hand-written formulas."""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
from torch.optim import lr_scheduler as torch_sched

from cadence.optim.scheduler import (
    INF,
    ConstantLR,
    CosineAnnealingLR,
    CosineAnnealingParamScheduler,
    ExponentialLR,
    LinearLR,
    MultiStepLR,
    PolyLR,
    StepLR,
    StepParamScheduler,
    _ParamScheduler,
    build_param_schedulers,
)

BASE = 0.1


def make_sgd(lrs: tuple[float, ...] = (BASE,), momentum: float = 0.9) -> torch.optim.SGD:
    groups = [{"params": [torch.nn.Parameter(torch.zeros(2))], "lr": lr} for lr in lrs]
    return torch.optim.SGD(groups, lr=lrs[0], momentum=momentum)


def lr_sequence(optimizer: Any, schedulers: list[Any], steps: int, group: int = 0) -> list[float]:
    """lr in effect at each of ``steps`` iterations (scheduler stepped after each)."""
    values = []
    for _ in range(steps):
        values.append(optimizer.param_groups[group]["lr"])
        optimizer.step()
        for scheduler in schedulers:
            scheduler.step()
    return values


def torch_sequence(factory: Callable[[Any], Any], steps: int) -> list[float]:
    optimizer = make_sgd()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scheduler = factory(optimizer)
        return lr_sequence(optimizer, [scheduler], steps)


# ---------------------------------------------------------------- vs torch
TORCH_EQUIVALENTS = [
    (
        lambda o: StepLR(o, step_size=3, gamma=0.5),
        lambda o: torch_sched.StepLR(o, step_size=3, gamma=0.5),
    ),
    (
        lambda o: MultiStepLR(o, milestones=[2, 5, 5], gamma=0.1),
        lambda o: torch_sched.MultiStepLR(o, milestones=[2, 5, 5], gamma=0.1),
    ),
    (
        lambda o: ExponentialLR(o, gamma=0.9),
        lambda o: torch_sched.ExponentialLR(o, gamma=0.9),
    ),
    (
        lambda o: CosineAnnealingLR(o, T_max=7, eta_min=0.01),
        lambda o: torch_sched.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    ),
    # mmengine's window [0, 6) spans torch's total_iters=5
    (
        lambda o: LinearLR(o, start_factor=0.2, end=6),
        lambda o: torch_sched.LinearLR(o, start_factor=0.2, total_iters=5),
    ),
    (
        lambda o: ConstantLR(o, factor=0.25, end=6),
        lambda o: torch_sched.ConstantLR(o, factor=0.25, total_iters=5),
    ),
]


@pytest.mark.parametrize(("ours", "theirs"), TORCH_EQUIVALENTS)
def test_chained_schedules_equal_torch_bit_for_bit(ours: Any, theirs: Any) -> None:
    optimizer = make_sgd()
    got = lr_sequence(optimizer, [ours(optimizer)], 30)
    assert got == torch_sequence(theirs, 30)


# ------------------------------------------------------------ hand formulas
def test_step_lr_window_formula() -> None:
    begin, end, size, gamma = 3, 14, 4, 0.5
    optimizer = make_sgd()
    got = lr_sequence(optimizer, [StepLR(optimizer, size, gamma, begin=begin, end=end)], 25)
    for step, lr in enumerate(got):
        k = min(step, end - 1) - begin  # the scheduler's own step, frozen after end
        expected = BASE if k < 0 else BASE * gamma ** (k // size)
        assert lr == pytest.approx(expected, rel=1e-12), step


def test_multistep_lr_formula() -> None:
    optimizer = make_sgd()
    got = lr_sequence(optimizer, [MultiStepLR(optimizer, milestones=[3, 7], gamma=0.2)], 12)
    expected = [BASE * 0.2 ** sum(step >= m for m in (3, 7)) for step in range(12)]
    assert got == pytest.approx(expected, rel=1e-12)


def test_linear_lr_formula_and_end_factor() -> None:
    begin, end, start, stop = 2, 9, 0.1, 0.6
    optimizer = make_sgd()
    scheduler = LinearLR(optimizer, start_factor=start, end_factor=stop, begin=begin, end=end)
    got = lr_sequence(optimizer, [scheduler], 14)
    total = end - begin - 1
    for step, lr in enumerate(got):
        if step < begin:
            expected = BASE
        else:
            k = min(step - begin, total)
            expected = BASE * (start + (stop - start) * k / total)
        assert lr == pytest.approx(expected, rel=1e-12), step


def test_constant_lr_restores_value_at_end() -> None:
    optimizer = make_sgd()
    got = lr_sequence(optimizer, [ConstantLR(optimizer, factor=0.5, begin=2, end=5)], 8)
    assert got == pytest.approx([BASE, BASE, BASE / 2, BASE / 2, BASE, BASE, BASE, BASE])


def test_exponential_lr_formula_with_begin() -> None:
    optimizer = make_sgd()
    got = lr_sequence(optimizer, [ExponentialLR(optimizer, gamma=0.8, begin=4)], 10)
    expected = [BASE * 0.8 ** max(0, step - 4) for step in range(10)]
    assert got == pytest.approx(expected, rel=1e-12)


def test_cosine_eta_min_ratio_formula_per_group() -> None:
    lrs = (0.1, 0.4)
    optimizer = make_sgd(lrs)
    scheduler = CosineAnnealingLR(optimizer, T_max=10, eta_min_ratio=0.05, begin=0, end=11)
    seqs: list[list[float]] = [[], []]
    for _ in range(15):
        for group in range(2):
            seqs[group].append(optimizer.param_groups[group]["lr"])
        scheduler.step()
    for group, base in enumerate(lrs):
        low = base * 0.05
        for step, lr in enumerate(seqs[group]):
            t = min(step, 10)
            expected = low + (base - low) * (1 + math.cos(math.pi * t / 10)) / 2
            assert lr == pytest.approx(expected, rel=1e-12, abs=1e-15), (group, step)


def test_cosine_t_max_defaults_to_window_length() -> None:
    optimizer = make_sgd()
    scheduler = CosineAnnealingLR(optimizer, begin=2, end=12)
    assert scheduler.T_max == 10
    got = lr_sequence(optimizer, [scheduler], 14)
    assert got[:3] == [BASE] * 3
    last = BASE * (1 + math.cos(math.pi * 9 / 10)) / 2  # the window's last step is t=9
    assert got[11:] == pytest.approx([last] * 3, rel=1e-12)


def test_cosine_rejects_both_eta_min_and_ratio() -> None:
    with pytest.raises(ValueError, match="either eta_min or eta_min_ratio"):
        CosineAnnealingLR(make_sgd(), T_max=5, eta_min=0.0, eta_min_ratio=0.1)


def test_poly_lr_formula() -> None:
    end, power, eta_min = 11, 2.0, 0.001
    optimizer = make_sgd()
    got = lr_sequence(optimizer, [PolyLR(optimizer, eta_min=eta_min, power=power, end=end)], 14)
    total = end - 1
    for step, lr in enumerate(got):
        t = min(step, total)
        expected = eta_min + (BASE - eta_min) * (1 - t / total) ** power
        assert lr == pytest.approx(expected, rel=1e-12, abs=1e-15), step


# -------------------------------------------------------------- composing
def test_warmup_then_cosine_sequence_matches_formula() -> None:
    """The canonical recipe: 5 warm-up iterations, then epoch-based cosine run per iteration."""
    epoch_length, max_epochs, warmup, start, eta_min = 5, 4, 5, 0.01, 1e-4
    optimizer = make_sgd()
    schedulers = build_param_schedulers(
        optimizer,
        [
            dict(type="LinearLR", start_factor=start, by_epoch=False, begin=0, end=warmup),
            dict(
                type="CosineAnnealingLR",
                eta_min=eta_min,
                by_epoch=True,
                begin=1,
                convert_to_iter_based=True,
            ),
        ],
        epoch_length=epoch_length,
        max_epochs=max_epochs,
    )
    total = epoch_length * max_epochs
    got = lr_sequence(optimizer, schedulers, total + 3)
    t_max = total - epoch_length  # cosine from iteration 5 to the last one (20)
    for it, lr in enumerate(got):
        if it < warmup:
            expected = BASE * (start + (1 - start) * it / (warmup - 1))
        else:
            t = min(it, total - 1) - epoch_length
            expected = eta_min + (BASE - eta_min) * (1 + math.cos(math.pi * t / t_max)) / 2
        assert lr == pytest.approx(expected, rel=1e-12), it


def test_overlapping_schedulers_multiply() -> None:
    optimizer = make_sgd()
    warm = LinearLR(optimizer, start_factor=0.5, end=5)
    decay = StepLR(optimizer, step_size=2, gamma=0.1, by_epoch=False)
    got = lr_sequence(optimizer, [warm, decay], 8)
    for step, lr in enumerate(got):
        expected = BASE * (0.5 + 0.5 * min(step, 4) / 4) * 0.1 ** (step // 2)
        assert lr == pytest.approx(expected, rel=1e-12), step


def test_initial_lr_is_recorded_once_and_shared() -> None:
    optimizer = make_sgd((0.1, 0.3))
    first = LinearLR(optimizer, start_factor=0.5, end=3)
    assert [g["initial_lr"] for g in optimizer.param_groups] == [0.1, 0.3]
    second = CosineAnnealingLR(optimizer, T_max=4)
    assert first.base_values == second.base_values == [0.1, 0.3]


def test_by_epoch_equals_iteration_milestones_times_epoch_length() -> None:
    """An epoch-based scheduler stepped per epoch equals its iteration-based twin."""
    epoch_length, epochs = 3, 6

    def run(cfg: dict[str, Any]) -> list[float]:
        optimizer = make_sgd()
        (scheduler,) = build_param_schedulers(optimizer, cfg, epoch_length=epoch_length)
        values = []
        for _ in range(epochs):
            for _ in range(epoch_length):
                values.append(optimizer.param_groups[0]["lr"])
                if not scheduler.by_epoch:
                    scheduler.step()
            if scheduler.by_epoch:
                scheduler.step()
        return values

    by_epoch = run(dict(type="MultiStepLR", milestones=[2, 4], gamma=0.5))
    by_iter = run(dict(type="MultiStepLR", milestones=[6, 12], gamma=0.5, by_epoch=False))
    converted = run(
        dict(type="MultiStepLR", milestones=[2, 4], gamma=0.5, convert_to_iter_based=True)
    )
    expected = [BASE * 0.5 ** sum(it >= m for m in (6, 12)) for it in range(epoch_length * epochs)]
    assert by_epoch == by_iter == converted
    assert by_epoch == pytest.approx(expected)


# ------------------------------------------------------- iteration conversion
def test_build_iter_from_epoch_scales_epoch_valued_arguments() -> None:
    optimizer = make_sgd()
    step = StepLR.build_iter_from_epoch(optimizer, step_size=2, begin=1, end=5, epoch_length=10)
    assert (step.step_size, step.begin, step.end, step.by_epoch) == (20, 10, 50, False)
    multi = MultiStepLR.build_iter_from_epoch(optimizer, milestones=[8, 11], epoch_length=7)
    assert multi.milestones == {56: 1, 77: 1} and multi.end == INF
    cosine = CosineAnnealingLR.build_iter_from_epoch(
        optimizer, T_max=95, begin=5, end=100, epoch_length=4
    )
    assert (cosine.T_max, cosine.begin, cosine.end) == (380, 20, 400)
    generic = CosineAnnealingParamScheduler.build_iter_from_epoch(
        optimizer, "lr", begin=0.5, end=2, epoch_length=3
    )
    assert (generic.begin, generic.end, generic.T_max) == (1, 6, 5)


@pytest.mark.parametrize("epoch_length", [None, 0, -2])
def test_build_iter_from_epoch_needs_positive_epoch_length(epoch_length: Any) -> None:
    with pytest.raises(ValueError, match="epoch_length must be a positive"):
        StepParamScheduler.build_iter_from_epoch(
            make_sgd(), "lr", step_size=1, epoch_length=epoch_length
        )


def test_build_iter_from_epoch_rejects_iteration_based() -> None:
    with pytest.raises(ValueError, match="only an epoch-based"):
        LinearLR.build_iter_from_epoch(make_sgd(), by_epoch=False, epoch_length=3)


# ------------------------------------------------------------ base behaviour
def test_window_and_counters() -> None:
    optimizer = make_sgd()
    scheduler = ExponentialLR(optimizer, gamma=0.5, begin=2, end=4)
    assert (scheduler._global_step, scheduler.last_step) == (0, -1)
    for _ in range(6):
        scheduler.step()
    assert (scheduler._global_step, scheduler.last_step) == (6, 1)
    assert scheduler.get_last_value() == [pytest.approx(BASE * 0.5)]


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(begin=5, end=5), ValueError, "end should be larger than begin"),
        (dict(last_step=-2), ValueError, "last_step must be an int >= -1"),
        (dict(start_factor=-0.1), ValueError, "start_factor must be in"),
        (dict(end_factor=1.5), ValueError, "end_factor must be in"),
    ],
)
def test_bad_arguments_raise(kwargs: dict[str, Any], error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        LinearLR(make_sgd(), **kwargs)


def test_resume_with_last_step_needs_initial_value() -> None:
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(make_sgd(), step_size=2, last_step=3)


def test_rejects_non_optimizer() -> None:
    with pytest.raises(TypeError, match="torch.optim.Optimizer"):
        StepLR(object(), step_size=2)


def test_unknown_param_name_suggests_group_keys() -> None:
    with pytest.raises(KeyError, match="Did you mean 'momentum'"):
        StepParamScheduler(make_sgd(), "momentun", step_size=2)


def test_base_class_requires_get_value() -> None:
    with pytest.raises(NotImplementedError, match="_get_value"):
        _ParamScheduler(make_sgd(), "lr")


def test_get_last_value_before_window_reports_current() -> None:
    optimizer = make_sgd((0.1, 0.2))
    scheduler = StepLR(optimizer, step_size=1, begin=3)
    assert scheduler.get_last_value() == [0.1, 0.2]
    assert scheduler.end == INF


def test_verbose_logs_each_change() -> None:
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    logger = logging.getLogger("cadence.optim.scheduler")
    old_level, old_disabled = logger.level, logger.disabled
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.disabled = False
    try:
        optimizer = make_sgd((0.1, 0.2))
        scheduler = StepLR(optimizer, step_size=1, gamma=0.5, verbose=True)
        scheduler.step()
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
        logger.disabled = old_disabled
    messages = [record.getMessage() for record in records]
    assert any("group 1 set to 1.0000e-01" in m for m in messages)
    assert optimizer.param_groups[1]["lr"] == 0.1


def test_repr_shows_window_and_position() -> None:
    scheduler = LinearLR(make_sgd(), by_epoch=False, begin=0, end=500)
    assert repr(scheduler) == (
        "LinearLR(param_name='lr', begin=0, end=500, by_epoch=False, last_step=0)"
    )
