"""DeepSpeedStrategy for real on CPU: ZeRO 1, 2 and 3 over 2 gloo ranks train like one
process, resume exactly from the engine's checkpoint, and hand weights to one device."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from cadence.config import Config
from cadence.dist.testing import run_distributed
from cadence.runner import Runner

pytest.importorskip("deepspeed", reason="deepspeed not installed (pip install cadence[deepspeed])")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_cases  # noqa: E402


def single_process_reference(tmp_path, epochs):
    dist_cases._register_toys()
    cfg = dist_cases.config(str(tmp_path / "single"), 16, epochs, dict(type="SingleDeviceStrategy"))
    runner = Runner.from_cfg(Config(cfg))
    runner.train()
    return runner.model.state_dict()


@pytest.mark.dist
@pytest.mark.slow
@pytest.mark.parametrize("stage", [1, 2, 3])
def test_zero_stage_trains_resumes_and_hands_over_weights(tmp_path, stage):
    work = str(tmp_path / "run")
    first = run_distributed(dist_cases.train_deepspeed, work, 1, stage, timeout=300)
    resumed = run_distributed(dist_cases.train_deepspeed, work, 2, stage, True, timeout=300)
    full = run_distributed(
        dist_cases.train_deepspeed, str(tmp_path / "full"), 2, stage, timeout=300
    )
    assert resumed[0]["epoch"] == 2
    n = len(first[0]["losses"])
    assert resumed[0]["losses"] == full[0]["losses"][n:]  # the resumed epoch is bit-identical
    for key in full[0]["params"]:
        assert np.array_equal(full[0]["params"][key], resumed[0]["params"][key]), key
    reference = single_process_reference(tmp_path, 2)
    for key, value in reference.items():  # same global batch as one process (SGD)
        torch.testing.assert_close(
            torch.from_numpy(full[0]["params"][key]), value, rtol=1e-4, atol=1e-5
        )
    dist_cases._register_toys()
    cfg = dist_cases.config(
        str(tmp_path / "eval"),
        8,
        1,
        dict(type="SingleDeviceStrategy"),
        load_from=os.path.join(str(tmp_path / "full"), "epoch_2.pth"),
    )
    assert Runner.from_cfg(Config(cfg)).val() == full[0]["metrics"]
