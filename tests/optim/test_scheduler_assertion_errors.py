"""Scheduler arguments that mmengine rejects with ``assert`` are ValueErrors that are also
AssertionErrors, and the messages keep the phrases mmengine's users search for."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from cadence.optim.scheduler import (
    CosineAnnealingLR,
    CosineRestartLR,
    ReduceOnPlateauLR,
    StepLR,
    StepMomentum,
)
from cadence.optim.scheduler.base import SchedulerAssertionError


def make_sgd() -> torch.optim.SGD:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1, momentum=0.9)


@pytest.mark.parametrize(
    "build",
    [
        lambda o: CosineAnnealingLR(o, T_max=3, eta_min=0.0, eta_min_ratio=0.1),
        lambda o: CosineRestartLR(o, periods=[2, 3], restart_weights=[1], eta_min=0.0),
        lambda o: ReduceOnPlateauLR(o, by_epoch=False),
        lambda o: ReduceOnPlateauLR(o, last_step=-2),
        lambda o: StepLR.build_iter_from_epoch(o, step_size=1, epoch_length=-1),
    ],
)
def test_assert_checks_raise_a_value_and_assertion_error(
    build: Callable[[torch.optim.Optimizer], object],
) -> None:
    with pytest.raises(SchedulerAssertionError) as caught:
        build(make_sgd())
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, AssertionError)


def test_messages_carry_mmengines_phrases() -> None:
    optimizer = make_sgd()
    with pytest.raises(TypeError, match="should be an Optimizer"):
        StepLR("not an optimizer", step_size=1)
    with pytest.raises(ValueError, match="end should be larger than begin"):
        StepLR(optimizer, step_size=1, begin=5, end=2)
    with pytest.raises(KeyError, match="param 'initial_lr' is not specified"):
        StepLR(optimizer, step_size=1, last_step=3)
    asgd = torch.optim.ASGD([torch.nn.Parameter(torch.zeros(2))], lr=0.1)
    with pytest.raises(ValueError, match="must support momentum when using momentum scheduler"):
        StepMomentum(asgd, step_size=1)
