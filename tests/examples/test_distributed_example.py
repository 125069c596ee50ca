"""examples/distributed: the digits config under DDP, FSDP and DeepSpeed with torchrun."""

from __future__ import annotations

import os
import sys

import pytest
import torch
from example_runner import ROOT, run_example

sys.path.insert(0, ROOT)
pytest.importorskip("sklearn")  # the `examples` extra; CI installs it with `test`

import examples.digits.digits as digits  # noqa: E402  (registers at collection time)
from cadence.dist.testing import free_port  # noqa: E402
from cadence.inference import Predictor  # noqa: E402

CONFIGS = os.path.join(ROOT, "examples", "distributed", "configs")


@pytest.mark.dist
@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["ddp", "fsdp", "deepspeed"])
def test_two_process_run_writes_weights_that_predict_on_one_device(tmp_path, strategy):
    if strategy == "deepspeed":
        pytest.importorskip("deepspeed", reason="deepspeed not installed (cadence[deepspeed])")
    config = os.path.join(CONFIGS, f"cnn_2xb16_digits_{strategy}.py")
    run_example(
        "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", str(free_port()),
        "-m", "cadence", "train", config, "--launcher", "pytorch", "--work-dir", str(tmp_path),
        "--cfg-options", "train_cfg.max_epochs=2", "train_cfg.val_interval=2",
    )  # fmt: skip
    logs = [os.path.join(r, f) for r, _, fs in os.walk(tmp_path) for f in fs if f.endswith(".log")]
    with open(logs[0]) as f:
        assert "world size 2" in f.read()
    predictor = Predictor(config, tmp_path / "epoch_2.pth", device="cpu")
    test = digits.DigitsDataset("test")
    labels = torch.tensor([p["pred_label"] for p in predictor(list(test.images))])
    accuracy = (labels == torch.as_tensor(test.labels)).float().mean().item()
    assert accuracy > 0.8  # two epochs; chance is 0.1
