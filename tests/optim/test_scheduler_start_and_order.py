"""LinearLR from a zero factor, and the warning for stepping a scheduler before the optimizer."""

from __future__ import annotations

import warnings

import pytest
import torch

from cadence.optim import OptimWrapper
from cadence.optim.scheduler import LinearLR, LinearMomentum, StepLR


def make_sgd(lr: float = 1.0) -> torch.optim.SGD:
    return torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=lr, momentum=0.5)


def test_linear_lr_from_zero_ramps_to_the_base_value() -> None:
    optimizer = make_sgd(lr=0.8)
    scheduler = LinearLR(optimizer, start_factor=0, by_epoch=False, end=5)
    seen = [optimizer.param_groups[0]["lr"]]
    for _ in range(6):
        optimizer.step()
        scheduler.step()
        seen.append(optimizer.param_groups[0]["lr"])
    # factor start + (end - start) * step / (end - begin - 1), as torch's LinearLR formula
    assert seen == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 0.8, 0.8])


def test_linear_momentum_from_zero_and_its_state_round_trip() -> None:
    optimizer = make_sgd()
    scheduler = LinearMomentum(optimizer, start_factor=0.0, end_factor=0.5, by_epoch=False, end=3)
    assert optimizer.param_groups[0]["momentum"] == 0.0
    state = scheduler.state_dict()
    fresh = make_sgd()
    restored = LinearMomentum(fresh, start_factor=0.0, end_factor=0.5, by_epoch=False, end=3)
    restored.load_state_dict(state)
    for sched, opt in ((scheduler, optimizer), (restored, fresh)):
        opt.step()
        sched.step()
    # step 1 of 2: factor 0.25 of the momentum 0.5 the group had before
    assert optimizer.param_groups[0]["momentum"] == pytest.approx(0.125)
    assert fresh.param_groups[0]["momentum"] == pytest.approx(0.125)


def test_scheduler_stepped_before_the_optimizer_warns_once() -> None:
    optimizer = make_sgd()
    scheduler = StepLR(optimizer, step_size=1, by_epoch=False)
    with pytest.warns(UserWarning, match=r"StepLR.step\(\) was called before optimizer.step\(\)"):
        scheduler.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scheduler.step()  # only the first step after construction is checked


def test_no_warning_in_the_right_order_or_while_accumulating() -> None:
    optimizer = make_sgd()
    scheduler = StepLR(optimizer, step_size=1, by_epoch=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        optimizer.step()
        scheduler.step()
        # an accumulation window that has not closed: backward ran, the step comes later
        model = torch.nn.Linear(2, 1)
        wrapper = OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1), accumulative_counts=2)
        accumulating = StepLR(wrapper, step_size=1, by_epoch=False)
        wrapper.update_params(model(torch.ones(1, 2)).sum())
        accumulating.step()


def test_a_replaced_step_that_skips_the_original_is_reported() -> None:
    optimizer = make_sgd()
    scheduler = StepLR(optimizer, step_size=1, by_epoch=False)
    optimizer.step = lambda closure=None: None  # type: ignore[method-assign]
    optimizer.step()
    with pytest.warns(UserWarning, match="replacement calls the original"):
        scheduler.step()


def test_a_new_scheduler_on_a_stepped_optimizer_still_warns() -> None:
    optimizer = make_sgd()
    optimizer.step()  # steps taken before this scheduler existed do not count
    for group in optimizer.param_groups:
        group["initial_lr"] = group["lr"]
    scheduler = StepLR(optimizer, step_size=1, by_epoch=False, last_step=10)
    with pytest.warns(UserWarning, match="how-to-adjust-learning-rate"):
        scheduler.step()
