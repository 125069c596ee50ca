"""The multigrid example trains through its schedule and shows the schedule table."""

from __future__ import annotations

import ast
import os

import pytest
from example_runner import run_example

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.slow
def test_multigrid_example_prints_its_schedule_and_learns(tmp_path):
    stdout = run_example("examples/multigrid/train.py", "--work-dir", str(tmp_path))
    lines = stdout.splitlines()
    start = next(i for i, x in enumerate(lines) if "Multigrid schedule:" in x)
    assert "8 epochs x 1.5 -> 12 epochs" in lines[start]
    assert lines[start + 1].split()[:3] == ["epochs", "LR", "step"]
    # first stage: a quarter of the frames, batch 8 x 8, short cycle crops 16, 23, 23
    assert lines[start + 2].split()[:5] == ["0-3", "0", "64", "4", "23"]
    assert "128x16, 64x23, 64x23" in lines[start + 2]
    assert any("ft" in x.split()[:2] for x in lines[start + 2 : start + 12])
    assert sum("Multigrid: epochs" in x for x in lines) >= 4  # loaders rebuilt per stage
    line = next(x for x in lines if x.startswith("test metrics:"))
    metrics = ast.literal_eval(line.split(":", 1)[1].strip())
    assert metrics["accuracy/top1"] > 60  # 4 classes: chance is 25
