"""flop_count and activation_count of a small conv net, counted by hand."""

from __future__ import annotations

import torch
from torch import nn

from cadence.analysis import ActivationAnalyzer, activation_count, flop_count


def net() -> nn.Module:
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.Flatten(), nn.Linear(4 * 8 * 8, 5))


def test_flop_count_gives_gflops_by_operator_and_the_unsupported_ops() -> None:
    model = nn.Sequential(net(), nn.Tanh())
    flops, unsupported = flop_count(model, (torch.randn(2, 3, 8, 8),))
    # conv: 2 samples * weight (4, 3, 3, 3) * 64 positions; linear: 2 * 256 * 5
    assert flops == {"conv": 2 * 108 * 64 / 1e9, "linear": 2 * 256 * 5 / 1e9}
    assert unsupported == {"aten::tanh": 1}


def test_activation_count_counts_new_features_in_millions() -> None:
    acts, _ = activation_count(net(), (torch.randn(2, 3, 8, 8),))
    assert acts == {"conv": 2 * 4 * 64 / 1e6, "linear": 2 * 5 / 1e6}
    by_module = ActivationAnalyzer(net(), torch.randn(1, 3, 8, 8)).by_module()
    assert by_module == {"": 4 * 64 + 5, "0": 4 * 64, "1": 0, "2": 5}


def test_supported_ops_replace_the_default_handles() -> None:
    flops, _ = flop_count(
        net(), (torch.randn(1, 3, 8, 8),), {"aten::linear": lambda inputs, outputs: 7}
    )
    assert flops["linear"] == 7 / 1e9 and flops["conv"] == 108 * 64 / 1e9
