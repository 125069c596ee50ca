"""``cadence lr-find``: an exponential LR sweep that never touches the run's checkpoints."""

from __future__ import annotations

import math
import os

import pytest

from cadence.cli import main
from cadence.cli.lr_find import Sweep

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "examples", "blobs", "configs", "mlp_8xb64_blobs.py")


def run(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def test_smoothing_is_a_bias_corrected_moving_average_and_divergence_stops():
    sweep = Sweep(1e-3, 1.0, 10, smooth=0.5, diverge=2.0)
    assert sweep.record(1e-3, 4.0) is False  # (0.5 * 4) / (1 - 0.5) = 4
    assert sweep.record(2e-3, 2.0) is False  # (0.5 * 2 + 0.5 * 2) / (1 - 0.25) = 8 / 3
    assert sweep.smoothed[:2] == pytest.approx([4.0, 8 / 3])
    assert sweep.record(4e-3, 100.0) is True  # 51 / 0.875 = 58.3 > 2 * 8 / 3
    assert Sweep(1e-3, 1.0, 10).record(1e-3, math.nan) is True


def test_the_schedule_is_geometric_and_the_suggestion_is_the_steepest_fall():
    sweep = Sweep(1e-4, 1.0, 5, smooth=0.0)
    assert [sweep.lr_at(i) for i in range(5)] == pytest.approx([1e-4, 1e-3, 1e-2, 1e-1, 1.0])
    for lr, loss in zip([1e-4, 1e-3, 1e-2, 1e-1, 1.0], [2.0, 1.9, 1.0, 0.8, 0.7]):
        sweep.record(lr, loss)
    # central slopes per decade at 1e-3, 1e-2, 1e-1: -0.5, -0.55, -0.15
    assert sweep.suggestion() == pytest.approx(1e-2)


def test_lr_find_sweeps_stops_on_divergence_and_leaves_checkpoints_alone(tmp_path, blobs, capsys):
    work = tmp_path / "work"
    work.mkdir()
    (work / "epoch_1.pth").write_bytes(b"weights")
    (work / "last_checkpoint").write_text(str(work / "epoch_1.pth"))
    argv = ["lr-find", CONFIG, "--work-dir", str(work), "--steps", "30", "--start-lr", "1e-5",
            "--end-lr", "1e4"]  # fmt: skip
    assert run(argv) == 0
    out = capsys.readouterr().out
    assert "stopped: the loss diverged" in out
    suggested = float(out.split("suggested lr: ")[1].split()[0])
    assert 1e-3 <= suggested <= 1.0  # the blobs MLP trains with SGD at lr 0.1
    rows = (work / "lr_find" / "lr_find.csv").read_text().splitlines()[1:]
    lrs = [float(row.split(",")[1]) for row in rows]
    assert 3 <= len(lrs) < 30
    assert lrs == pytest.approx([1e-5 * 1e9 ** (i / 29) for i in range(len(lrs))], rel=1e-5)
    assert (work / "epoch_1.pth").read_bytes() == b"weights"
    assert (work / "last_checkpoint").read_text() == str(work / "epoch_1.pth")
    assert sorted(p.name for p in work.rglob("*.pth")) == ["epoch_1.pth"]
    assert (work / "lr_find" / "lr_find.png").is_file()


def test_a_reversed_range_is_an_error(tmp_path, capsys):
    assert run(["lr-find", CONFIG, "--start-lr", "1", "--end-lr", "0.1"]) == 2
    assert "0 < --start-lr < --end-lr" in capsys.readouterr().err
