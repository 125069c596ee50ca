"""BaseModel: train/val/test steps, loss parsing, forwarding data, device tracking."""

from __future__ import annotations

import contextlib
from collections import OrderedDict

import pytest
import torch
from torch import nn

from cadence.model import BaseDataPreprocessor, BaseModel, ImgDataPreprocessor, parse_losses
from cadence.model.base_model import run_train_step


class FakeOptimWrapper:
    """Stands in for cadence.optim.OptimWrapper: plain backward / step / zero_grad."""

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.optimizer = optimizer
        self.context_models: list[nn.Module] = []

    def optim_context(self, model: nn.Module):
        self.context_models.append(model)
        return contextlib.nullcontext()

    def update_params(self, loss: torch.Tensor) -> None:
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()


class RecordingPreprocessor(BaseDataPreprocessor):
    def __init__(self) -> None:
        super().__init__()
        self.training_flags: list[bool] = []

    def forward(self, data, training=False):
        self.training_flags.append(training)
        return super().forward(data, training)


class Regressor(BaseModel):
    def __init__(self, data_preprocessor=None) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.linear = nn.Linear(3, 1)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        out = self.linear(inputs)
        if mode == "loss":
            error = (out - data_samples) ** 2
            return {"loss_mse": error.mean(), "loss_l1": [error.sqrt()], "acc": -error.mean()}
        if mode == "predict":
            return list(out.detach())
        return out


def regression_data():
    generator = torch.Generator().manual_seed(0)
    inputs = torch.randn(16, 3, generator=generator)
    targets = inputs @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.3
    return {"inputs": inputs, "data_samples": targets}


def test_train_step_lowers_the_loss_and_returns_detached_log_vars():
    torch.manual_seed(0)
    preprocessor = RecordingPreprocessor()
    model = Regressor(data_preprocessor=preprocessor)
    wrapper = FakeOptimWrapper(torch.optim.SGD(model.parameters(), lr=0.05))
    data = regression_data()

    with torch.no_grad():  # the loss before the first update, computed with plain torch
        error = (
            data["inputs"] @ model.linear.weight.T + model.linear.bias - data["data_samples"]
        ) ** 2
        expected_first = error.mean() + error.sqrt().mean()

    history = [model.train_step(data, wrapper) for _ in range(30)]
    first = history[0]
    assert isinstance(first, OrderedDict)
    assert list(first) == ["loss", "loss_mse", "loss_l1", "acc"]
    assert torch.allclose(first["loss"], expected_first)
    assert torch.allclose(first["loss"], first["loss_mse"] + first["loss_l1"])
    assert torch.allclose(first["acc"], -first["loss_mse"])
    assert all(not v.requires_grad and v.grad_fn is None for v in first.values())
    assert history[-1]["loss"] < 0.2 * history[0]["loss"]
    assert preprocessor.training_flags == [True] * 30
    assert wrapper.context_models == [model] * 30


class CountingForward(nn.Module):
    """A wrapper that runs the model's forward pass and counts the calls (as DDP would)."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model, self.calls = model, 0

    def forward(self, *args, **kwargs):
        self.calls += 1
        return self.model(*args, **kwargs)


@pytest.mark.parametrize("optim_context", [True, False])
def test_run_train_step_forwards_through_the_given_callable(optim_context):
    preprocessor = RecordingPreprocessor()
    model = Regressor(data_preprocessor=preprocessor)
    wrapper = FakeOptimWrapper(torch.optim.SGD(model.parameters(), lr=0.05))
    forward = CountingForward(model)
    before = model.linear.weight.detach().clone()
    log_vars = run_train_step(model, regression_data(), wrapper, forward, optim_context)
    assert list(log_vars) == ["loss", "loss_mse", "loss_l1", "acc"]
    assert forward.calls == 1 and preprocessor.training_flags == [True]
    assert wrapper.context_models == ([forward] if optim_context else [])
    assert not torch.equal(model.linear.weight, before)  # update_params ran
    data = regression_data()  # a list/tuple from the preprocessor goes by position
    model.data_preprocessor = BaseDataPreprocessor()
    as_list = [data["inputs"], data["data_samples"]]
    run_train_step(model, as_list, wrapper, forward, optim_context)
    assert forward.calls == 2
    with pytest.raises(TypeError, match="dict .* or a list/tuple"):
        run_train_step(model, data["inputs"], wrapper, forward, optim_context)


def test_val_and_test_steps_predict_without_training_flag():
    preprocessor = RecordingPreprocessor()
    model = Regressor(data_preprocessor=preprocessor)
    data = regression_data()
    expected = list(model.linear(data["inputs"]).detach())
    for step in (model.val_step, model.test_step):
        predictions = step(data)
        assert isinstance(predictions, list) and len(predictions) == 16
        assert all(torch.equal(p, e) for p, e in zip(predictions, expected))
    assert preprocessor.training_flags == [False, False]


def test_run_forward_unpacks_dicts_and_sequences():
    model = Regressor()
    inputs = torch.ones(2, 3)
    expected = model.linear(inputs)
    assert torch.equal(model._run_forward({"inputs": inputs}, mode="tensor"), expected)
    assert torch.equal(model._run_forward([inputs, None], mode="tensor"), expected)
    assert torch.equal(model._run_forward((inputs,), mode="tensor"), expected)
    with pytest.raises(TypeError, match="dict .* or a list/tuple"):
        model._run_forward(inputs, mode="tensor")


def test_parse_losses_values_by_hand():
    weight = torch.tensor([1.0, 3.0], requires_grad=True)
    losses = {
        "loss_a": weight,  # mean 2
        "loss_b": [torch.tensor([1.0, 1.0]), torch.tensor(4.0)],  # 1 + 4
        "accuracy": torch.tensor([0.5, 1.0]),  # logged, not summed
    }
    total, log_vars = parse_losses(losses)
    assert total.item() == 7.0
    assert total.requires_grad
    assert list(log_vars) == ["loss", "loss_a", "loss_b", "accuracy"]
    assert [v.item() for v in log_vars.values()] == [7.0, 2.0, 5.0, 0.75]
    assert not any(v.requires_grad for v in log_vars.values())
    total.backward()
    assert weight.grad.tolist() == [0.5, 0.5]


def test_parse_losses_with_a_term_named_loss():
    total, log_vars = parse_losses({"loss": torch.tensor(1.0), "loss_aux": torch.tensor(2.0)})
    assert total.item() == 3.0
    assert list(log_vars) == ["loss", "loss_aux"] and log_vars["loss"].item() == 3.0


def test_parse_losses_single_scalar_loss_matches_the_general_rule():
    weight = torch.tensor(2.0, requires_grad=True)
    loss = weight * 3.0
    total, log_vars = parse_losses({"loss": loss})
    assert total is loss  # nothing recomputed: the total is the loss itself
    assert list(log_vars) == ["loss"] and type(log_vars) is OrderedDict
    assert log_vars["loss"].item() == 6.0 and not log_vars["loss"].requires_grad
    # a one-element loss that is not 0-dim still goes through the mean
    total, log_vars = parse_losses({"loss": torch.tensor([4.0, 2.0])})
    assert total.item() == 3.0 and log_vars["loss"].item() == 3.0
    with pytest.raises(ValueError, match="'loss' in its name"):
        parse_losses({"acc": torch.tensor(1.0)})


def test_parse_losses_errors_name_the_key():
    with pytest.raises(TypeError, match="'loss_x' must be a tensor or a non-empty list"):
        parse_losses({"loss_x": 1.0})
    with pytest.raises(TypeError, match="'loss_y'"):
        parse_losses({"loss_y": []})
    with pytest.raises(TypeError, match="'loss_z'"):
        parse_losses({"loss_z": [torch.tensor(1.0), "x"]})
    with pytest.raises(ValueError, match=r"no entry .* 'loss' in its name .*\['acc'\]"):
        parse_losses({"acc": torch.tensor(1.0)})
    with pytest.raises(TypeError, match="dict of losses"):
        parse_losses([torch.tensor(1.0)])  # type: ignore[arg-type]


def test_data_preprocessor_argument_forms():
    assert type(Regressor().data_preprocessor) is BaseDataPreprocessor
    built = Regressor(data_preprocessor=dict(type="ImgDataPreprocessor", mean=[0], std=[1]))
    assert isinstance(built.data_preprocessor, ImgDataPreprocessor)
    untyped = Regressor(data_preprocessor=dict(non_blocking=True))
    assert type(untyped.data_preprocessor) is BaseDataPreprocessor
    assert untyped.data_preprocessor._non_blocking is True
    module = RecordingPreprocessor()
    assert Regressor(data_preprocessor=module).data_preprocessor is module
    with pytest.raises(TypeError, match="dict config, an nn.Module or None"):
        Regressor(data_preprocessor="BaseDataPreprocessor")


def test_device_moves_reach_the_preprocessor():
    model = Regressor()
    model.to(torch.float64)  # dtype only: device unchanged
    assert model.data_preprocessor.device == torch.device("cpu")
    assert model.linear.weight.dtype == torch.float64
    model.to("meta")
    assert model.data_preprocessor.device == torch.device("meta")
    assert model.linear.weight.device.type == "meta"
    moved = model.data_preprocessor({"inputs": torch.ones(1, 3)})
    assert moved["inputs"].device.type == "meta"

    other = Regressor()
    other.data_preprocessor._device = torch.device("meta")
    assert other.cpu() is other
    assert other.data_preprocessor.device == torch.device("cpu")


def test_base_model_is_abstract():
    class NoForward(BaseModel):
        pass

    with pytest.raises(TypeError, match="abstract"):
        NoForward()
