"""The model summary: parameters by top-level module, trainable vs frozen, buffers, size."""

from __future__ import annotations

import torch
from torch import nn

from cadence.model.summary import human, summarize, summary_line, summary_table


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(8, 32)  # 8*32 + 32 = 288
        self.norm = nn.BatchNorm1d(32)  # 64 params; buffers 32 + 32 + 1 = 65
        self.head = nn.Linear(32, 4)  # 132
        self.tied = self.head  # the same module again: one row, counted once
        self.scale = nn.Parameter(torch.ones(1))  # held by the model itself


def test_rows_count_each_top_level_module_and_shared_weights_once():
    model = Net()
    model.encoder.requires_grad_(False)
    rows, total = summarize(model)
    got = {r.name: (r.trainable, r.frozen, r.buffers) for r in rows}
    assert got == {"encoder": (0, 288, 0), "norm": (64, 0, 65), "head": (132, 0, 0),
                   "(own)": (1, 0, 0)}  # fmt: skip
    assert (total.params, total.trainable, total.frozen) == (485, 197, 288)
    # float32 parameters and buffers, int64 num_batches_tracked
    assert total.bytes == 485 * 4 + 64 * 4 + 8


def test_table_and_line_say_the_same_totals():
    model = Net()
    table = summary_table(model)
    assert table.splitlines()[-1].split()[:6] == ["total", "Net", "485", "485", "0", "65"]
    assert summary_line(model) == "Net: 485 parameters (485 trainable), 65 buffer values, 2.2 KiB"


def test_human_units():
    assert human(999) == "999" and human(1234567) == "1.2 M"
    assert human(2048, "B", 1024) == "2.0 KiB" and human(512, "B", 1024) == "512 B"
