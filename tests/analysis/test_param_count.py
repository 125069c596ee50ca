"""Parameter counts per parameter and module, shared weights once, and their table."""

from __future__ import annotations

from torch import nn

from cadence.analysis import parameter_count, parameter_count_table


class Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.out = nn.Linear(4, 10)
        self.out.weight = self.embed.weight  # tied: 40 elements, counted once


def test_parameter_count_counts_a_tied_weight_once_under_its_first_name() -> None:
    counts = parameter_count(Tied())
    assert counts[""] == 40 + 10
    assert counts["embed"] == counts["embed.weight"] == 40
    assert counts["out"] == counts["out.bias"] == 10


def test_parameter_count_table_rows_per_module_and_parameter_shape() -> None:
    table = parameter_count_table(nn.Sequential(nn.Linear(30, 10), nn.ReLU()), max_depth=2)
    lines = table.splitlines()
    assert lines[0] == "parameter count of Sequential"
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines[3:]]
    assert cells == [
        ["model", "0.31K"], ["0", "0.31K"], ["0.weight", "(10, 30)"], ["0.bias", "(10,)"]
    ]  # fmt: skip
    shallow = parameter_count_table(nn.Sequential(nn.Linear(30, 10)), max_depth=1)
    assert "0.weight" not in shallow and "|  0 " in shallow
