"""as_cadence_model: a plain nn.Module trains like a BaseModel, keeping its state_dict keys."""

from __future__ import annotations

import contextlib
import copy
import pickle

import pytest
import torch
from torch import nn

from cadence.model import BaseDataPreprocessor, BaseModel, ImgDataPreprocessor, as_cadence_model


class PlainNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1))

    def forward(self, inputs, targets=None, mode="tensor"):
        out = self.body(inputs)
        if mode == "loss":
            return {"loss": ((out - targets) ** 2).mean()}
        if mode == "predict":
            return list(out.detach())
        return out


class OwnStep(PlainNet):
    def train_step(self, data, optim_wrapper):
        return {"custom": True}


class Wrapper:
    def __init__(self, params) -> None:
        self.optimizer = torch.optim.Adam(params, lr=0.05)

    def optim_context(self, model):
        return contextlib.nullcontext()

    def update_params(self, loss):
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()


def test_plain_module_becomes_a_base_model_in_place():
    torch.manual_seed(0)
    net = PlainNet()
    keys = list(net.state_dict())
    model = as_cadence_model(net)
    assert model is net
    assert isinstance(model, BaseModel) and isinstance(model, PlainNet)
    assert type(model).__name__ == "PlainNet"
    assert list(model.state_dict()) == keys  # nothing prefixed, the preprocessor adds no keys
    assert [name for name, _ in model.named_parameters()] == [
        "body.0.weight", "body.0.bias", "body.2.weight", "body.2.bias",
    ]  # fmt: skip
    assert isinstance(model.data_preprocessor, BaseDataPreprocessor)


def test_adapted_module_trains_and_predicts():
    torch.manual_seed(0)
    model = as_cadence_model(PlainNet())
    inputs = torch.randn(32, 2)
    data = {"inputs": inputs, "targets": inputs[:, :1] * inputs[:, 1:]}
    wrapper = Wrapper(model.parameters())
    losses = [model.train_step(data, wrapper)["loss"] for _ in range(60)]
    assert losses[-1] < 0.5 * losses[0]
    assert not losses[0].requires_grad
    predictions = model.val_step({"inputs": inputs[:3]})
    expected = model.body(inputs[:3]).detach()
    assert all(torch.equal(p, e) for p, e in zip(predictions, expected))


def test_base_models_and_bad_inputs():
    class Native(BaseModel):
        def forward(self, inputs, data_samples=None, mode="tensor"):
            return inputs

    native = Native()
    assert as_cadence_model(native) is native
    with pytest.raises(TypeError, match="expects an nn.Module"):
        as_cadence_model(lambda x: x)  # type: ignore[arg-type]
    odd = PlainNet()
    odd.data_preprocessor = "not a module"
    with pytest.raises(TypeError, match="must be an nn.Module"):
        as_cadence_model(odd)


def test_preprocessor_choice_and_existing_one_kept():
    model = as_cadence_model(
        PlainNet(), data_preprocessor=dict(type="ImgDataPreprocessor", mean=[0], std=[1])
    )
    assert isinstance(model.data_preprocessor, ImgDataPreprocessor)
    own = BaseDataPreprocessor()
    net = PlainNet()
    net.data_preprocessor = own
    assert as_cadence_model(net).data_preprocessor is own


def test_class_is_made_once_and_own_methods_win():
    first, second = as_cadence_model(PlainNet()), as_cadence_model(PlainNet())
    assert type(first) is type(second)
    assert as_cadence_model(OwnStep()).train_step({}, None) == {"custom": True}


def test_copies_and_pickles_stay_models():
    model = as_cadence_model(PlainNet())
    clone = copy.deepcopy(model)
    assert isinstance(clone, BaseModel) and clone is not model
    assert clone.body[0].weight is not model.body[0].weight
    assert torch.equal(clone.body[0].weight, model.body[0].weight)
    restored = pickle.loads(pickle.dumps(model))
    assert isinstance(restored, BaseModel) and isinstance(restored, PlainNet)
    assert list(restored.state_dict()) == list(model.state_dict())
    inputs = torch.randn(4, 2)
    assert torch.equal(restored(inputs), model(inputs))


def test_device_follows_the_module():
    net = PlainNet().to("meta")
    model = as_cadence_model(net)
    assert model.data_preprocessor.device == torch.device("meta")
    fresh = as_cadence_model(PlainNet())
    fresh.to("meta")
    assert fresh.data_preprocessor.device == torch.device("meta")
