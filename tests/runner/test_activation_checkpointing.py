"""turn_on_activation_checkpointing: same outputs and gradients, activations recomputed."""

import pytest
import torch
from torch import nn

from cadence.runner import turn_on_activation_checkpointing


class Counting(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return torch.tanh(self.lin(x))


def test_checkpointed_submodule_recomputes_forward_with_same_grads():
    torch.manual_seed(0)
    model = nn.Sequential(Counting(), nn.Linear(3, 1))
    x = torch.randn(4, 3, requires_grad=True)
    model(x).sum().backward()
    grad = x.grad.clone()
    x.grad = None
    turn_on_activation_checkpointing(model, "0")
    model[0].calls = 0
    model(x).sum().backward()
    assert model[0].calls == 2  # once forward, once recomputed in backward
    torch.testing.assert_close(x.grad, grad)


def test_unknown_submodule_names_the_close_ones():
    model = nn.Sequential()
    model.add_module("backbone", Counting())
    with pytest.raises(AttributeError, match="no submodule 'backbon'.*'backbone'"):
        turn_on_activation_checkpointing(model, ["backbon"])
