"""AmpOptimWrapper against a hand-written AMPTrainer-style loop (detectron2's recipe).

The reference loop is written here with torch only: forward under autocast,
``scaler.scale(loss).backward()``, ``scaler.unscale_`` before clipping,
``scaler.step`` (skips a step whose gradients hold inf/NaN), ``scaler.update``
(lowers the scale after an overflow, raises it after ``growth_interval``
finite steps). Trajectories are compared step by step: parameters, optimizer
state and scale.
"""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from cadence.optim import AmpOptimWrapper

STEPS = 8
OVERFLOW_AT = (2, 5)  # these steps see inputs that overflow float16 in the forward pass


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))


def _batch(step: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(step)
    x = torch.randn(8, 4, generator=gen)
    if step in OVERFLOW_AT:
        x = x * 1e6  # float16 max is 65504: the first Linear's output is inf
    return x, torch.randn(8, 2, generator=gen)


def _loss(model: nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return nn.functional.mse_loss(model(x).float(), y)


def _optimizer(kind: str, model: nn.Module) -> torch.optim.Optimizer:
    if kind == "sgd":
        return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return torch.optim.Adam(model.parameters(), lr=0.01)


def _reference(kind: str, max_norm: float | None) -> list[dict]:
    """AMPTrainer's step, by hand."""
    model = _model()
    optimizer = _optimizer(kind, model)
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10, growth_interval=2)
    trace = []
    for step in range(STEPS):
        x, y = _batch(step)
        with torch.autocast("cpu", dtype=torch.float16):
            loss = _loss(model, x, y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        if max_norm is not None:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        trace.append(_snapshot(model, optimizer, scaler.get_scale(), loss))
    return trace


def _wrapper(kind: str, max_norm: float | None) -> list[dict]:
    """The same run through AmpOptimWrapper, as a model's train_step drives it."""
    model = _model()
    clip = dict(max_norm=max_norm) if max_norm is not None else None
    wrapper = AmpOptimWrapper(
        optimizer=_optimizer(kind, model), dtype="float16", clip_grad=clip,
        loss_scale=dict(init_scale=2.0**10, growth_interval=2),
    )  # fmt: skip
    trace = []
    for step in range(STEPS):
        x, y = _batch(step)
        with wrapper.optim_context(model):
            loss = _loss(model, x, y)
        wrapper.update_params(loss)
        trace.append(_snapshot(model, wrapper.optimizer, wrapper.loss_scaler.get_scale(), loss))
    return trace


def _snapshot(model: nn.Module, optimizer: torch.optim.Optimizer, scale: float, loss) -> dict:
    state = [
        {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in s.items()}
        for s in optimizer.state.values()
    ]
    params = [p.detach().clone() for p in model.parameters()]
    return {"params": params, "state": state, "scale": scale, "loss": float(loss.detach())}


@pytest.mark.parametrize("kind", ["sgd", "adam"])
@pytest.mark.parametrize("max_norm", [None, 0.5])
def test_float16_trajectory_equals_the_amp_trainer_recipe(kind, max_norm):
    want, got = _reference(kind, max_norm), _wrapper(kind, max_norm)
    scales = [entry["scale"] for entry in want]
    for step, (a, b) in enumerate(zip(want, got)):
        assert a["scale"] == b["scale"], step
        for p, q in zip(a["params"], b["params"]):
            torch.testing.assert_close(q, p, rtol=0, atol=0)
        assert len(a["state"]) == len(b["state"])
        for sa, sb in zip(a["state"], b["state"]):
            assert sa.keys() == sb.keys()
            for key in sa:
                torch.testing.assert_close(sb[key], sa[key], rtol=0, atol=0)
    # the scenario really exercised overflow handling: an inf loss, then the scale halved
    for step in OVERFLOW_AT:
        assert not math.isfinite(got[step]["loss"])
        assert scales[step] == scales[step - 1] / 2
        for p, q in zip(got[step - 1]["params"], got[step]["params"]):
            assert torch.equal(p, q)  # the step was skipped
    assert max(scales) > 2.0**10  # and it grew after growth_interval finite steps


def test_skipped_step_leaves_adam_state_untouched():
    trace = _wrapper("adam", None)
    step_counts = [float(entry["state"][0]["step"]) if entry["state"] else 0 for entry in trace]
    finite_so_far = [sum(t not in OVERFLOW_AT for t in range(s + 1)) for s in range(STEPS)]
    assert step_counts == [float(n) for n in finite_so_far]


def test_unscale_happens_before_clipping():
    """A clip threshold between the scaled and the unscaled norm separates the two orders."""
    model, ref = _model(), _model()
    wrapper = AmpOptimWrapper(
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1), dtype="float16",
        loss_scale=2.0**12, clip_grad=dict(max_norm=1e3),
    )  # fmt: skip
    x, y = _batch(0)
    with wrapper.optim_context(model):
        loss = _loss(model, x, y)
    wrapper.update_params(loss)
    with torch.autocast("cpu", dtype=torch.float16):
        ref_loss = _loss(ref, x, y)
    ref_loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(ref.parameters(), 1e3)
    assert norm * 2.0**12 > 1e3 > norm  # clipping scaled gradients would shrink them
    with torch.no_grad():
        for p in ref.parameters():
            p -= 0.1 * p.grad
    for p, q in zip(model.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q)
    torch.testing.assert_close(wrapper.pop_log_vars()["grad_norm"], norm)


def test_bfloat16_needs_no_scaler_and_equals_plain_autocast():
    model, ref = _model(), _model()
    wrapper = AmpOptimWrapper(optimizer=torch.optim.SGD(model.parameters(), lr=0.05))
    optimizer = torch.optim.SGD(ref.parameters(), lr=0.05)
    assert wrapper.cast_dtype == torch.bfloat16 and not wrapper.loss_scaler.is_enabled()
    for step in (0, 1, 3):
        x, y = _batch(step)
        with wrapper.optim_context(model):
            wrapper.update_params(_loss(model, x, y))
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = _loss(ref, x, y)
        loss.backward()
        optimizer.step()
        for p, q in zip(model.parameters(), ref.parameters()):
            torch.testing.assert_close(p, q, rtol=0, atol=0)
