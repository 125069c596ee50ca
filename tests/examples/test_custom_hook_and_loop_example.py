"""examples/custom_hook_and_loop: the config picks a custom loop and hook by name."""

from __future__ import annotations

import pytest
from example_runner import printed, printed_dict, run_example

pytest.importorskip("sklearn")  # the `examples` extra; CI installs it with `test`


@pytest.mark.slow  # a training run in a subprocess
def test_custom_loop_stops_at_the_target_and_the_hook_writes_the_confusion_matrix(tmp_path):
    stdout = run_example(
        "examples/custom_hook_and_loop/train.py", "--work-dir", str(tmp_path),
        "--cfg-options", "train_cfg.max_epochs=4", "train_cfg.target_loss=100.0",
    )  # fmt: skip
    # Any epoch's loss is below 100, so the custom loop stops after the first one.
    assert printed(stdout, "loop") == "TargetLossTrainLoop trained 1 of 4 epochs"
    accuracy = printed_dict(stdout, "test metrics")["accuracy/top1"]
    path = printed(stdout, "confusion matrix")
    with open(path) as f:
        rows = [list(map(int, line.split(",")[1:])) for line in f.read().splitlines()[1:]]
    assert len(rows) == 10 and all(len(row) == 10 for row in rows)
    total = sum(map(sum, rows))
    assert total == 359  # the test split: 20 % of 1797 images
    assert 100.0 * sum(rows[i][i] for i in range(10)) / total == pytest.approx(accuracy, abs=0.01)
