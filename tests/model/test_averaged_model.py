"""Averaged models: EMA, momentum-annealing EMA and SWA against hand-computed averages."""

from __future__ import annotations

import copy
import logging
import pickle

import pytest
import torch
from torch import nn

from cadence.model import (
    BaseAveragedModel,
    ExponentialMovingAverage,
    MomentumAnnealingEMA,
    StochasticWeightAverage,
)
from cadence.registry import MODELS


def net() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def perturb(model: nn.Module, seed: int) -> dict[str, torch.Tensor]:
    """Move every parameter (as an optimizer would) and return a float64 snapshot."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=g))
    return {k: p.detach().double().clone() for k, p in model.named_parameters()}


def assert_params_close(averaged: BaseAveragedModel, expected: dict[str, torch.Tensor]) -> None:
    got = dict(averaged.module.named_parameters())
    assert set(got) == set(expected)
    for key, value in expected.items():
        torch.testing.assert_close(got[key].double(), value, rtol=0, atol=1e-6, msg=key)


def test_ema_follows_the_recurrence_computed_by_hand():
    model, m = net(), 0.1
    ema = ExponentialMovingAverage(model, momentum=m)
    expected: dict[str, torch.Tensor] = {}
    for step in range(6):
        snap = perturb(model, step)
        ema.update_parameters(model)
        if step == 0:
            expected = dict(snap)  # the first update copies
        else:
            expected = {k: (1 - m) * expected[k] + m * snap[k] for k in snap}
    assert_params_close(ema, expected)
    assert int(ema.steps) == 6
    # the averaged copy is independent of the model and has no gradients
    assert all(not p.requires_grad for p in ema.module.parameters())
    assert ema.module[0].weight.data_ptr() != model[0].weight.data_ptr()


def test_interval_averages_only_every_nth_update_but_counts_all():
    model, m = net(), 0.5
    ema = ExponentialMovingAverage(model, momentum=m, interval=2)
    expected: dict[str, torch.Tensor] = {}
    for step in range(5):
        snap = perturb(model, step)
        ema.update_parameters(model)
        if step == 0:
            expected = dict(snap)
        elif step % 2 == 0:  # steps 2 and 4 average; 1 and 3 are skipped
            expected = {k: (1 - m) * expected[k] + m * snap[k] for k in snap}
    assert_params_close(ema, expected)
    assert int(ema.steps) == 5


def test_swa_is_the_plain_mean_of_the_snapshots():
    model = net()
    swa = StochasticWeightAverage(model)
    snaps = []
    for step in range(4):
        snaps.append(perturb(model, step))
        swa.update_parameters(model)
    mean = {k: sum(s[k] for s in snaps) / len(snaps) for k in snaps[0]}
    assert_params_close(swa, mean)


def test_momentum_annealing_uses_the_larger_of_momentum_and_gamma_over_steps():
    model, m, gamma = net(), 0.3, 2
    ema = MomentumAnnealingEMA(model, momentum=m, gamma=gamma)
    expected: dict[str, torch.Tensor] = {}
    for step in range(6):
        snap = perturb(model, step)
        ema.update_parameters(model)
        if step == 0:
            expected = dict(snap)
        else:
            w = max(m, gamma / (gamma + step))  # 2/3, 1/2, 2/5, 1/3, then 0.3 (momentum)
            expected = {k: (1 - w) * expected[k] + w * snap[k] for k in snap}
    assert_params_close(ema, expected)


def test_buffers_are_copied_unless_update_buffers_then_averaged():
    def set_stats(model, value, count):
        bn = model[1]
        bn.running_mean.fill_(value)
        bn.num_batches_tracked.fill_(count)

    model = net()
    copied = ExponentialMovingAverage(model, momentum=0.25)
    averaged = ExponentialMovingAverage(model, momentum=0.25, update_buffers=True)
    for value, count in ((4.0, 1), (8.0, 2)):
        set_stats(model, value, count)
        copied.update_parameters(model)
        averaged.update_parameters(model)
    assert torch.equal(copied.module[1].running_mean, torch.full((4,), 8.0))
    # 4 copied first, then 0.75 * 4 + 0.25 * 8
    assert torch.allclose(averaged.module[1].running_mean, torch.full((4,), 5.0))
    # the integer batch counter is copied in both modes
    assert int(copied.module[1].num_batches_tracked) == 2
    assert int(averaged.module[1].num_batches_tracked) == 2


def test_state_dict_resumes_exactly_including_the_step_count():
    model = net()
    first = MomentumAnnealingEMA(model, momentum=0.01, gamma=3)
    for step in range(3):
        perturb(model, step)
        first.update_parameters(model)
    state = first.state_dict()
    assert set(state) == {"steps"} | {f"module.{k}" for k in model.state_dict()}

    other = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))
    second = MomentumAnnealingEMA(other, momentum=0.01, gamma=3)
    second.load_state_dict(state)
    for step in range(3, 6):  # the annealed weight depends on the restored count
        perturb(model, step)
        first.update_parameters(model)
        second.update_parameters(model)
    for (k, a), b in zip(first.state_dict().items(), second.state_dict().values()):
        assert torch.equal(a, b), k
    assert int(second.steps) == 6


def test_a_subclass_with_its_own_avg_func_is_used():
    class KeepMax(ExponentialMovingAverage):
        def avg_func(self, averaged_param, source_param, steps):
            torch.maximum(averaged_param, source_param, out=averaged_param)

    model = net()
    keep = KeepMax(model, momentum=0.1)
    snaps = [perturb(model, s) for s in range(1)]
    keep.update_parameters(model)
    snaps.append(perturb(model, 1))
    keep.update_parameters(model)
    expected = {k: torch.maximum(snaps[0][k], snaps[1][k]) for k in snaps[0]}
    assert_params_close(keep, expected)


def test_forward_runs_the_averaged_copy():
    model = nn.Linear(2, 1)
    ema = ExponentialMovingAverage(model, momentum=0.5)
    ema.update_parameters(model)
    with torch.no_grad():
        model.weight.fill_(3.0)
    x = torch.ones(1, 2)
    assert not torch.equal(ema(x), model(x))
    assert torch.equal(ema(x), ema.module(x))


def test_registered_and_validated(current_log):
    model = nn.Linear(2, 1)
    built = MODELS.build(dict(type="ExponentialMovingAverage", model=model, momentum=0.01))
    assert isinstance(built, ExponentialMovingAverage) and built.momentum == 0.01
    for name in ("MomentumAnnealingEMA", "StochasticWeightAverage"):
        assert MODELS.get(name) is not None
    with pytest.raises(ValueError, match="momentum"):
        ExponentialMovingAverage(model, momentum=1.5)
    with pytest.raises(ValueError, match="interval"):
        StochasticWeightAverage(model, interval=0)
    with pytest.raises(ValueError, match="gamma"):
        MomentumAnnealingEMA(model, gamma=0)
    ExponentialMovingAverage(model, momentum=0.9)
    # a WARNING of the current logger, as mmengine logs it
    assert [r.levelno for r in current_log] == [logging.WARNING]
    assert "usually small" in current_log[0].getMessage()
    with pytest.raises(AssertionError, match="momentum must be in range"):
        ExponentialMovingAverage(model, momentum=3)  # also mmengine's type and phrase
    with pytest.raises(AssertionError, match="gamma must be greater than 0"):
        MomentumAnnealingEMA(model, gamma=-1)
    with pytest.raises(TypeError):
        BaseAveragedModel(model)  # type: ignore[abstract]
    with pytest.raises(KeyError, match="structure"):
        ExponentialMovingAverage(model).update_parameters(nn.Linear(2, 1, bias=False))


def test_tied_weights_are_averaged_once_and_replaced_buffers_are_followed():
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, nn.BatchNorm1d(2), shared)
    ema = ExponentialMovingAverage(model, momentum=0.5)
    snaps = [perturb(model, 0)]
    ema.update_parameters(model)
    snaps.append(perturb(model, 1))
    ema.update_parameters(model)
    expected = {k: 0.5 * snaps[0][k] + 0.5 * snaps[1][k] for k in snaps[0]}
    assert_params_close(ema, expected)  # a double update would give 0.25 / 0.75
    assert ema.module[0].weight is ema.module[2].weight
    # a buffer replaced after the first update (as .to() does) is still the one copied
    model[1].running_mean = torch.full((2,), 9.0)
    ema.update_parameters(model)
    assert torch.equal(ema.module[1].running_mean, torch.full((2,), 9.0))


def test_pickled_and_deep_copied_averages_keep_updating_their_own_copy():
    model = net()
    ema = ExponentialMovingAverage(model, momentum=0.5)
    snaps = [perturb(model, 0)]
    ema.update_parameters(model)
    clones = [pickle.loads(pickle.dumps(ema)), copy.deepcopy(ema)]
    snaps.append(perturb(model, 1))
    for clone in clones:
        clone.update_parameters(model)
        assert_params_close(clone, {k: 0.5 * snaps[0][k] + 0.5 * snaps[1][k] for k in snaps[0]})
    assert_params_close(ema, snaps[0])  # the original was not touched through a shared plan
