"""mmengine's function initialisers: same draws as mmengine's calls into torch.nn.init."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from cadence.model import (
    caffe2_xavier_init,
    constant_init,
    kaiming_init,
    normal_init,
    trunc_normal_init,
    uniform_init,
    xavier_init,
)
from cadence.model.weight_init import trunc_normal_


def _conv() -> nn.Conv2d:
    return nn.Conv2d(3, 8, 3)


def _seeded(fn, module: nn.Module) -> nn.Module:  # type: ignore[no-untyped-def]
    torch.manual_seed(0)
    fn(module)
    return module


# (the cadence call, the torch.nn.init calls mmengine 0.10.7 makes for it)
CASES = [
    (lambda m: constant_init(m, 0.5, bias=0.1), lambda m: nn.init.constant_(m.weight, 0.5)),
    (lambda m: xavier_init(m, gain=2, bias=0.1, distribution="uniform"),
     lambda m: nn.init.xavier_uniform_(m.weight, gain=2)),
    (lambda m: xavier_init(m, bias=0.1), lambda m: nn.init.xavier_normal_(m.weight, gain=1)),
    (lambda m: normal_init(m, 1, 0.02, bias=0.1), lambda m: nn.init.normal_(m.weight, 1, 0.02)),
    (lambda m: uniform_init(m, -1, 2, bias=0.1), lambda m: nn.init.uniform_(m.weight, -1, 2)),
    (lambda m: kaiming_init(m, bias=0.1),
     lambda m: nn.init.kaiming_normal_(m.weight, a=0, mode="fan_out", nonlinearity="relu")),
    (lambda m: kaiming_init(m, a=0.1, mode="fan_in", bias=0.1, distribution="uniform"),
     lambda m: nn.init.kaiming_uniform_(m.weight, a=0.1, mode="fan_in", nonlinearity="relu")),
    (lambda m: caffe2_xavier_init(m, bias=0.1),
     lambda m: nn.init.kaiming_uniform_(m.weight, a=1, mode="fan_in", nonlinearity="leaky_relu")),
]  # fmt: skip


@pytest.mark.parametrize("ours, reference", CASES)
def test_initialiser_draws_what_mmengine_draws(ours, reference) -> None:  # type: ignore[no-untyped-def]
    got = _seeded(ours, _conv())
    want = _seeded(reference, _conv())
    assert torch.equal(got.weight, want.weight)
    assert torch.equal(got.bias, torch.full((8,), 0.1))


def test_trunc_normal_is_the_inverse_cdf_method_and_stays_in_bounds() -> None:
    torch.manual_seed(0)
    ours = trunc_normal_(torch.empty(1000), 0.5, 2.0, -1.0, 3.0)
    torch.manual_seed(0)
    u = torch.empty(1000)
    cdf = [(1 + math.erf(x / math.sqrt(2))) / 2 for x in ((-1.0 - 0.5) / 2.0, (3.0 - 0.5) / 2.0)]
    u.uniform_(2 * cdf[0] - 1, 2 * cdf[1] - 1)
    want = (u.erfinv() * 2.0 * math.sqrt(2) + 0.5).clamp(-1.0, 3.0)
    assert torch.equal(ours, want)
    assert ours.min() >= -1.0 and ours.max() <= 3.0
    layer = _seeded(lambda m: trunc_normal_init(m, 0.5, 2.0, -1.0, 3.0), nn.Linear(1000, 1))
    assert torch.equal(layer.weight.detach().flatten(), want)


def test_modules_without_weight_or_bias_are_left_alone() -> None:
    relu = nn.ReLU()
    constant_init(relu, 1.0)
    linear = nn.Linear(2, 2, bias=False)
    constant_init(linear, 3.0, bias=1.0)
    assert torch.equal(linear.weight, torch.full((2, 2), 3.0))
    with pytest.raises(ValueError, match="distribution"):
        kaiming_init(linear, distribution="gamma")
