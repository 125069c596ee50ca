"""get_model_complexity_info: the numbers, the texts and the errors."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from cadence.analysis import get_model_complexity_info


class TwoInputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(5, 3)
        self.b = nn.Linear(7, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.a(x) + self.b(y)


def test_complexity_of_random_inputs_of_the_given_shapes() -> None:
    info = get_model_complexity_info(TwoInputs(), input_shape=((2, 5), (2, 7)))
    assert info["flops"] == 2 * 5 * 3 + 2 * 7 * 3
    assert info["activations"] == 2 * 3 + 2 * 3
    assert info["params"] == 18 + 24 and info["params_str"] == "42"
    rows = [line.split("|")[1].strip() for line in info["out_table"].splitlines()[3:]]
    assert rows == ["model", "a", "a.weight", "a.bias", "b", "b.weight", "b.bias"]
    assert "(a): Linear(\n    #params: 18, #flops: 30, #activations: 6\n" in info["out_arch"]


def test_texts_are_left_out_when_not_asked_for() -> None:
    info = get_model_complexity_info(
        nn.Linear(400, 300), inputs=torch.randn(1, 400), show_table=False, show_arch=False
    )
    assert info["flops_str"] == "0.12M" and info["params_str"] == "0.12M"
    assert info["out_table"] == info["out_arch"] == ""


def test_inputs_or_their_shape_exactly_one_of_them() -> None:
    with pytest.raises(ValueError, match='one of "input_shape" and "inputs" should be set'):
        get_model_complexity_info(nn.Linear(2, 2))
    with pytest.raises(ValueError, match="cannot be both set"):
        get_model_complexity_info(nn.Linear(2, 2), (2,), torch.randn(1, 2))
    with pytest.raises(ValueError, match=r"input_shape=\[2\] is neither a tuple of int"):
        get_model_complexity_info(nn.Linear(2, 2), input_shape=[2])
