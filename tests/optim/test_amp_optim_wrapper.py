"""AmpOptimWrapper: autocast, loss scaling, skipped steps and scaler state."""

from __future__ import annotations

import copy
from contextlib import contextmanager

import pytest
import torch
from torch import nn

from cadence.optim import AmpOptimWrapper, OptimWrapper
from cadence.registry import OPTIM_WRAPPERS


def _model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def _data(n: int = 16, seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=gen)
    return x, x[:, :2] * 2 - x[:, 2:] + 0.5


def _loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return nn.functional.mse_loss(model(x).float(), y)


def _amp(model: nn.Module, lr: float = 0.1, **kwargs) -> AmpOptimWrapper:
    return AmpOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=lr), **kwargs)


def _sgd_by_hand(model: nn.Module, lr: float = 0.1) -> None:
    with torch.no_grad():
        for p in model.parameters():
            p -= lr * p.grad


# ---------------------------------------------------------------- autocast
def test_cpu_defaults_to_bfloat16_autocast_without_scaler():
    model = _model()
    wrapper = _amp(model)
    assert wrapper.device_type == "cpu" and wrapper.cast_dtype == torch.bfloat16
    assert not wrapper.loss_scaler.is_enabled()
    x, _ = _data()
    with wrapper.optim_context(model):
        assert torch.is_autocast_enabled("cpu")
        assert model(x).dtype == torch.bfloat16
    assert not torch.is_autocast_enabled("cpu")
    assert model(x).dtype == torch.float32


def test_bfloat16_training_reduces_the_loss():
    model = _model()
    wrapper = _amp(model, lr=0.05, dtype="bfloat16")
    x, y = _data(64)
    with torch.no_grad():
        start = _loss(model, x, y).item()
    for _ in range(30):
        with wrapper.optim_context(model):
            loss = _loss(model, x, y)
        wrapper.update_params(loss)
    with torch.no_grad():
        end = _loss(model, x, y).item()
    assert end < 0.5 * start


def test_bfloat16_backward_and_step_equal_plain_sgd():
    # Outside autocast the wrapper must behave exactly like OptimWrapper (no scaling).
    model, ref = _model(), _model()
    wrapper = _amp(model, dtype=torch.bfloat16)
    x, y = _data()
    wrapper.update_params(_loss(model, x, y))
    _loss(ref, x, y).backward()
    _sgd_by_hand(ref)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q)


def test_float16_on_cpu_uses_a_scaler_and_float16_autocast():
    model = _model()
    wrapper = _amp(model, dtype="float16")
    assert wrapper.loss_scaler.is_enabled() and wrapper.loss_scaler.get_scale() == 65536.0
    with wrapper.optim_context(model):
        assert model(_data()[0]).dtype == torch.float16


class _NoSyncNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = _model()
        self.entered = 0

    @contextmanager
    def no_sync(self):
        self.entered += 1
        yield

    def forward(self, x):
        return self.net(x)


def test_optim_context_combines_no_sync_and_autocast():
    model = _NoSyncNet()
    wrapper = _amp(model, accumulative_counts=2)
    with wrapper.optim_context(model):
        assert model(_data()[0]).dtype == torch.bfloat16
    assert model.entered == 1


# ---------------------------------------------------------------- scaling
def test_static_scale_multiplies_gradients_and_step_unscales():
    model, ref = _model(), _model()
    wrapper = _amp(model, dtype="float16", loss_scale=1024.0)
    x, y = _data()
    wrapper.backward(_loss(model, x, y))
    _loss(ref, x, y).backward()
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p.grad, 1024.0 * q.grad)
    wrapper.step()
    _sgd_by_hand(ref)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q)
    assert wrapper.loss_scaler.get_scale() == 1024.0


def test_static_scale_stays_after_an_inf_step():
    model = _model()
    wrapper = _amp(model, dtype="float16", loss_scale=512)
    x, y = _data()
    wrapper.backward(_loss(model, x, y))
    model[0].weight.grad[0, 0] = float("inf")
    before = [p.detach().clone() for p in model.parameters()]
    wrapper.step()
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters()))
    assert wrapper.loss_scaler.get_scale() == 512.0


def test_dynamic_scale_skips_a_step_with_inf_gradients_and_backs_off():
    model = _model()
    wrapper = _amp(model, dtype="float16")
    x, y = _data()
    wrapper.backward(_loss(model, x, y))
    model[2].bias.grad[0] = float("nan")
    before = [p.detach().clone() for p in model.parameters()]
    wrapper.step()
    wrapper.zero_grad()
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters()))
    assert wrapper.loss_scaler.get_scale() == 32768.0
    wrapper.update_params(_loss(model, x, y))  # a finite step updates again
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))


def test_loss_scale_dict_configures_the_grad_scaler():
    model = _model()
    wrapper = _amp(model, dtype="float16", loss_scale=dict(init_scale=8.0, growth_interval=1))
    x, y = _data()
    wrapper.update_params(_loss(model, x, y))
    assert wrapper.loss_scaler.get_scale() == 16.0  # grew after one finite step


def test_clipping_sees_unscaled_gradients():
    model, ref = _model(), _model()
    wrapper = _amp(model, dtype="float16", loss_scale=4096.0, clip_grad=dict(max_norm=0.05))
    x, y = _data()
    wrapper.update_params(_loss(model, x, y))
    _loss(ref, x, y).backward()
    total = torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.05)
    _sgd_by_hand(ref)
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q)
    torch.testing.assert_close(wrapper.pop_log_vars()["grad_norm"], total)


def test_accumulation_steps_once_per_window():
    model = _model()
    wrapper = _amp(model, dtype="float16", accumulative_counts=2)
    x, y = _data()
    before = [p.detach().clone() for p in model.parameters()]
    wrapper.update_params(_loss(model, x, y))
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters()))
    wrapper.update_params(_loss(model, x, y))
    assert any(not torch.equal(b, p) for b, p in zip(before, model.parameters()))
    assert wrapper.inner_count == 2


def test_use_fsdp_selects_the_sharded_scaler():
    from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

    wrapper = _amp(_model(), dtype="float16", use_fsdp=True)
    assert isinstance(wrapper.loss_scaler, ShardedGradScaler)


# ---------------------------------------------------------------- state
def test_scaler_state_round_trips_through_state_dict():
    model = _model()
    wrapper = _amp(model, dtype="float16", loss_scale=dict(init_scale=256.0, growth_interval=3))
    x, y = _data()
    wrapper.backward(_loss(model, x, y))
    model[0].bias.grad[0] = float("inf")
    wrapper.step()  # scale 256 -> 128
    state = copy.deepcopy(wrapper.state_dict())
    assert state["loss_scaler"]["scale"] == 128.0 and state["loss_scaler"]["growth_interval"] == 3
    other = _amp(_model(), dtype="float16")
    other.load_state_dict(state)
    assert other.loss_scaler.get_scale() == 128.0
    assert other.loss_scaler.get_growth_interval() == 3
    assert "loss_scaler" in state  # the argument is not modified


def test_bfloat16_state_has_an_empty_scaler_entry_that_loads_back():
    wrapper = _amp(_model())
    state = wrapper.state_dict()
    assert state["loss_scaler"] == {}
    _amp(_model()).load_state_dict(state)
    fp16 = _amp(_model(), dtype="float16")
    fp16.load_state_dict(state)  # a bf16 checkpoint keeps the fp16 scaler's own state
    assert fp16.loss_scaler.get_scale() == 65536.0


def test_built_by_name_and_is_an_optim_wrapper():
    model = _model()
    wrapper = OPTIM_WRAPPERS.build(
        dict(type="AmpOptimWrapper", dtype="float16", loss_scale=128.0, accumulative_counts=2),
        default_args=dict(optimizer=torch.optim.SGD(model.parameters(), lr=0.1)),
    )
    assert isinstance(wrapper, OptimWrapper) and wrapper.accumulative_counts == 2
    assert "AmpOptimWrapper" in repr(wrapper) and "float16" in repr(wrapper)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (dict(loss_scale="dynamc"), ValueError, "Did you mean 'dynamic'"),
        (dict(loss_scale=-1.0), ValueError, "must be > 0"),
        (dict(loss_scale=[1.0]), TypeError, "loss_scale must be"),
        (dict(loss_scale=dict(init_scal=2.0)), ValueError, "Did you mean 'init_scale'"),
        (dict(dtype="bfloat"), ValueError, "Did you mean.*'bfloat16'"),
        (dict(dtype=torch.float32), TypeError, "dtype must be None"),
        (dict(device="tpu"), ValueError, "invalid device"),
    ],
)
def test_bad_arguments_are_refused(kwargs, error, match):
    with pytest.raises(error, match=match):
        _amp(_model(), **kwargs)


def test_cuda_path_or_refusal():
    if torch.cuda.is_available():
        model, ref = _model().cuda(), _model().cuda()
        wrapper = _amp(model, dtype="float16", loss_scale=256.0)
        assert wrapper.device_type == "cuda" and wrapper.loss_scaler.is_enabled()
        x, y = (t.cuda() for t in _data())
        with wrapper.optim_context(model):
            assert torch.is_autocast_enabled("cuda") and model(x).dtype == torch.float16
            loss = _loss(model, x, y)
        wrapper.update_params(loss)
        _loss(ref, x, y).backward()
        _sgd_by_hand(ref)
        for p, q in zip(model.parameters(), ref.parameters()):  # fp16 forward, close to fp32
            torch.testing.assert_close(p, q, atol=2e-3, rtol=1e-2)
        assert not torch.equal(model[0].weight, _model().cuda()[0].weight)
    else:
        with pytest.raises(RuntimeError, match="CUDA is not available"):
            _amp(_model(), device="cuda")
