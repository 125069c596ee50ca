"""A plain torch module whose forward takes no ``mode`` is refused with what to write."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cadence.model import BaseModel, as_cadence_model


def test_a_module_without_mode_gets_the_code_to_write():
    with pytest.raises(TypeError) as info:
        as_cadence_model(nn.Linear(2, 3))
    text = str(info.value)
    assert "Linear.forward(input: torch.Tensor) -> torch.Tensor takes no `mode`" in text
    assert "class LinearTrainer(BaseModel):" in text
    assert 'return {"loss": F.cross_entropy(out, data_samples)}' in text


def test_the_suggested_wrapper_trains():
    class LinearTrainer(BaseModel):  # the code the message suggests, for nn.Linear
        def __init__(self, **kwargs):
            super().__init__()
            self.net = nn.Linear(**kwargs)

        def forward(self, inputs, data_samples=None, mode="tensor"):
            out = self.net(inputs)
            if mode == "loss":
                return {"loss": nn.functional.cross_entropy(out, data_samples)}
            return out.argmax(1) if mode == "predict" else out

    model = as_cadence_model(LinearTrainer(in_features=2, out_features=3))
    batch = {"inputs": torch.randn(4, 2), "data_samples": torch.tensor([0, 1, 2, 0])}
    loss = model._run_forward(batch, mode="loss")["loss"]
    assert loss.ndim == 0 and loss.item() > 0
    assert model.val_step(batch).shape == (4,)


def test_modules_with_mode_or_their_own_steps_are_accepted():
    class WithMode(nn.Module):
        def forward(self, inputs, data_samples=None, mode="tensor"):
            return inputs

    class OwnSteps(nn.Linear):
        def train_step(self, data, optim_wrapper):
            return {}

    assert isinstance(as_cadence_model(WithMode()), BaseModel)
    assert isinstance(as_cadence_model(OwnSteps(2, 2)), BaseModel)
