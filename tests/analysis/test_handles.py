"""Per-op handles: the counts of einsum, transposed convolutions and norms, by hand."""

from __future__ import annotations

import torch
from torch import nn

from cadence.analysis import FlopAnalyzer
from cadence.analysis.handles import einsum_flop_count


def test_einsum_contracts_operands_left_to_right_and_spells_out_ellipses() -> None:
    # i,j,k = 2*3*4 for the first pair, then i,k,l = 2*4*5 with the intermediate ik
    assert einsum_flop_count("ij,jk,kl->il", [[2, 3], [3, 4], [4, 5]]) == 24 + 40
    assert einsum_flop_count("...ij,...jk->...ik", [[2, 3, 4], [2, 4, 5]]) == 2 * 3 * 4 * 5
    assert einsum_flop_count("ij,jk", [[2, 3], [3, 4]]) == 2 * 3 * 4  # implicit output ik


def test_transposed_convolution_counts_weights_per_input_position() -> None:
    conv = nn.ConvTranspose2d(4, 6, kernel_size=3, stride=2, groups=2)
    flops = FlopAnalyzer(conv, torch.randn(2, 4, 5, 5)).by_operator()
    # weight (4, 3, 3, 3) applied at each of the 5x5 input positions of both samples
    assert flops == {"conv": 2 * (4 * 3 * 3 * 3) * 25}


def test_layer_norm_costs_five_per_element_with_affine_four_without() -> None:
    x = torch.randn(3, 7)
    assert FlopAnalyzer(nn.LayerNorm(7), x).total() == 5 * 21
    assert FlopAnalyzer(nn.LayerNorm(7, elementwise_affine=False), x).total() == 4 * 21
