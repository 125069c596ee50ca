"""The README's examples keep working."""

from __future__ import annotations

import ast

from example_runner import run_example


def test_blobs_example_trains_and_tests(tmp_path):
    stdout = run_example(
        "examples/blobs/train.py", "--work-dir", str(tmp_path),
        "--cfg-options", "train_cfg.max_epochs=2", "train_cfg.val_interval=1",
    )  # fmt: skip
    line = next(x for x in stdout.splitlines() if x.startswith("test metrics:"))
    metrics = ast.literal_eval(line.split(":", 1)[1].strip())
    assert metrics["accuracy/top1"] > 70  # 8 classes: chance is 12.5
    assert (tmp_path / "last_checkpoint").exists()


def test_config_tour_example_runs():
    stdout = run_example("examples/config_tour/run.py")
    assert "loaded back: equal" in stdout
