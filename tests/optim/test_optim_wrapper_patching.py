"""Methods replaced on one OptimWrapper instance are called by update_params (no shortcut)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cadence.optim import OptimWrapper


def make_wrapper() -> tuple[nn.Linear, OptimWrapper]:
    model = nn.Linear(2, 1)
    return model, OptimWrapper(torch.optim.SGD(model.parameters(), lr=0.1))


@pytest.mark.parametrize("name", ["step", "zero_grad", "backward"])
def test_a_method_patched_on_the_instance_runs_in_update_params(name: str) -> None:
    model, wrapper = make_wrapper()
    calls: list[str] = []
    original = getattr(wrapper, name)

    def patched(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    setattr(wrapper, name, patched)
    before = model.weight.detach().clone()
    wrapper.update_params(model(torch.ones(1, 2)).sum())
    assert calls == [name]
    assert not torch.equal(model.weight, before)  # the original still did its work
    assert model.weight.grad is None or not model.weight.grad.any()  # zeroed after the step


def test_a_patched_step_can_veto_the_update() -> None:
    model, wrapper = make_wrapper()
    wrapper.step = lambda **kwargs: None  # type: ignore[method-assign]
    before = model.weight.detach().clone()
    wrapper.update_params(model(torch.ones(1, 2)).sum())
    assert torch.equal(model.weight, before)
