"""``cadence plot`` draws several validation sets apart: one line per set in a key's subplot."""

from __future__ import annotations

import pytest

from cadence.visualization.plot import _lines, select_keys
from cadence.visualization.scalar_log import PlotError, ScalarLog

RECORDS = [
    {"loss": 1.0, "epoch": 1, "iter": 2, "step": 2},
    {"clean/accuracy/top1": 80.0, "noisy/accuracy/top1": 60.0, "clean/loss": 0.9,
     "noisy/loss": 1.5, "step": 1},
    {"loss": 0.8, "epoch": 2, "iter": 4, "step": 4},
    {"clean/accuracy/top1": 85.0, "noisy/accuracy/top1": 62.0, "clean/loss": 0.7,
     "noisy/loss": 1.4, "step": 2},
]  # fmt: skip


def test_a_key_logged_by_sets_gets_one_line_per_set_beside_its_own():
    run = ScalarLog("digits", "scalars.json", RECORDS)
    lines = {label: (curve.xs, curve.ys) for label, curve in _lines(run, "loss", "step")}
    assert lines == {
        "digits": ([2.0, 4.0], [1.0, 0.8]),
        "digits (clean)": ([2.0, 4.0], [0.9, 0.7]),
        "digits (noisy)": ([2.0, 4.0], [1.5, 1.4]),
    }
    accuracy = [label for label, _ in _lines(run, "accuracy/top1", "step")]
    assert accuracy == ["digits (clean)", "digits (noisy)"]


def test_a_key_only_sets_log_can_be_asked_for():
    run = ScalarLog("digits", "scalars.json", RECORDS)
    assert select_keys([run], ["accuracy/top1", "loss"]) == ["accuracy/top1", "loss"]
    with pytest.raises(PlotError, match="unknown key 'top5'"):
        select_keys([run], ["top5"])
