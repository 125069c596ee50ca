"""examples/gan: two optimizers through OptimWrapperDict and a custom train_step."""

from __future__ import annotations

import math
import sys

import pytest
import torch
from example_runner import ROOT, printed, printed_dict, run_example

sys.path.insert(0, ROOT)

import examples.gan.gan as gan  # noqa: E402  (registers at collection time)


def test_mode_coverage_scores_real_points_high_and_a_collapsed_generator_low():
    metric = gan.ModeCoverage(num_modes=8, radius=2.0, std=0.05)
    real = gan.RingDataset(1000, seed=3).points
    scores = metric.compute_metrics(list(real))
    assert scores["modes"] == 8 and scores["near_share"] > 0.99
    collapsed = [torch.tensor([2.0, 0.0])] * 100  # every point on one mode
    assert metric.compute_metrics(collapsed) == {"modes": 1.0, "near_share": 1.0}


@pytest.mark.slow  # a training run in a subprocess
def test_short_run_steps_both_optimizers_with_their_own_schedules(tmp_path):
    iters = 40
    stdout = run_example(
        "examples/gan/train.py", "--work-dir", str(tmp_path), "--cfg-options",
        f"train_cfg.max_iters={iters}", f"train_cfg.val_interval={iters}",
        f"default_hooks.checkpoint.interval={iters}",
    )  # fmt: skip
    assert printed(stdout, "optimizers") == "['discriminator', 'generator']"
    metrics = printed_dict(stdout, "val metrics")
    assert 0 <= metrics["ring/modes"] <= 8 and 0 <= metrics["ring/near_share"] <= 1

    checkpoint = torch.load(tmp_path / f"iter_{iters}.pth", weights_only=True)
    optimizers = checkpoint["optimizer"]
    assert set(optimizers) == {"generator", "discriminator"}
    for state in optimizers.values():  # each Adam stepped once per iteration
        assert all(int(s["step"]) == iters for s in state["state"].values())
    # generator: cosine from 1e-3 towards 1e-4 over 1500 iterations; its `end` defaults to
    # max_iters and its last step is end - 1. discriminator: no scheduler, constant lr.
    (cosine,) = checkpoint["param_schedulers"]["generator"]
    assert cosine["last_step"] == iters - 1
    expected = 1e-4 + (1e-3 - 1e-4) * (1 + math.cos(math.pi * (iters - 1) / 1500)) / 2
    assert math.isclose(optimizers["generator"]["param_groups"][0]["lr"], expected, rel_tol=1e-6)
    assert optimizers["discriminator"]["param_groups"][0]["lr"] == 1e-3

    assert checkpoint["param_schedulers"]["discriminator"] == []
    assert {k.split(".")[0] for k in checkpoint["state_dict"]} == {"generator", "discriminator"}
