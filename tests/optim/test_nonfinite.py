"""``optim_wrapper=dict(skip_nonfinite=True, ...)``: non-finite steps skipped on every rank."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from cadence.optim import NonFiniteStepsError, OptimWrapper, build_optim_wrapper


def wrapper_for(model: nn.Module, **options) -> OptimWrapper:
    return build_optim_wrapper(model, dict(optimizer=dict(type="SGD", lr=0.5), **options))


def step(wrapper: OptimWrapper, model: nn.Linear, extra: float = 0.0) -> None:
    """One update on the loss ``w + b + extra`` (gradient 1 on each parameter)."""
    wrapper.update_params(model.weight.sum() + model.bias.sum() + extra)


def test_a_non_finite_loss_skips_the_step_and_is_counted():
    model = nn.Linear(1, 1)
    with torch.no_grad():
        model.weight.fill_(1.0), model.bias.fill_(0.0)
    wrapper = wrapper_for(model, skip_nonfinite=True)
    assert isinstance(wrapper, OptimWrapper)
    step(wrapper, model)
    assert model.weight.item() == pytest.approx(0.5)
    step(wrapper, model, extra=math.nan)  # finite gradients, NaN loss: skipped all the same
    assert model.weight.item() == pytest.approx(0.5) and model.weight.grad is None
    assert wrapper.pop_log_vars() == {"nonfinite_skips": 1}
    step(wrapper, model)  # training goes on
    assert model.weight.item() == pytest.approx(0.0)
    assert wrapper.nonfinite_guard.consecutive == 0


def test_a_non_finite_gradient_with_a_finite_loss_skips_the_step():
    model = nn.Linear(1, 1)
    with torch.no_grad():
        model.weight.fill_(0.0)
    wrapper = wrapper_for(model, skip_nonfinite=True)
    wrapper.update_params(model.weight.sqrt().sum())  # sqrt(0) = 0, its gradient is inf
    assert model.weight.item() == 0.0 and wrapper.nonfinite_guard.skipped == 1


def test_repeated_skips_stop_with_a_message():
    model = nn.Linear(1, 1)
    wrapper = wrapper_for(model, skip_nonfinite=True, max_consecutive=2)
    step(wrapper, model, extra=math.inf)
    with pytest.raises(NonFiniteStepsError, match="2 optimizer steps in a row had a non-finite"):
        step(wrapper, model, extra=math.inf)


def test_rollback_without_a_checkpoint_hook_says_so():
    model = nn.Linear(1, 1)
    wrapper = wrapper_for(model, skip_nonfinite=True, max_consecutive=1, on_repeated="rollback")
    with pytest.raises(NonFiniteStepsError, match="needs the CheckpointHook"):
        step(wrapper, model, extra=math.nan)


def test_off_by_default_the_wrapper_is_untouched():
    wrapper = wrapper_for(nn.Linear(1, 1))
    assert type(wrapper) is OptimWrapper and not hasattr(wrapper, "nonfinite_guard")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (dict(max_consecutive=3), "max_consecutive needs optim_wrapper.skip_nonfinite"),
        (dict(skip_nonfinite=True, on_repeated="pause"), "must be 'stop' or 'rollback'"),
        (dict(skip_nonfinite=True, max_consecutive=0), "max_consecutive must be an int >= 1"),
        (dict(skip_nonfinite="yes"), "skip_nonfinite must be True or False"),
    ],
)  # fmt: skip
def test_bad_options_name_the_key(options, message):
    with pytest.raises(ValueError, match=message):
        wrapper_for(nn.Linear(1, 1), **options)


def test_the_skip_counts_travel_with_the_optimizer_state():
    model = nn.Linear(1, 1)
    wrapper = wrapper_for(model, skip_nonfinite=True)
    step(wrapper, model, extra=math.nan)
    state = wrapper.state_dict()
    assert state["nonfinite_guard"] == {"skipped": 1, "consecutive": 1}
    fresh = wrapper_for(model, skip_nonfinite=True)
    fresh.load_state_dict(state)
    assert fresh.nonfinite_guard.skipped == 1
    plain = wrapper_for(model)  # a run without the guard loads such a state too
    plain.load_state_dict(state)
    assert plain.optimizer.param_groups[0]["lr"] == 0.5
