"""DDPStrategy for real: 2 gloo ranks train, agree, match one process, save and resume."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
import torch

from cadence.config import Config
from cadence.dist.testing import run_distributed
from cadence.runner import Runner
from cadence.strategies import infer_launcher, process_info

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_cases as ddp_cases  # noqa: E402


@pytest.mark.dist
def test_ddp_trains_agrees_across_ranks_and_matches_one_process(tmp_path):
    results = run_distributed(ddp_cases.train_ddp, str(tmp_path / "ddp"), 2, timeout=120)
    r0, r1 = results
    assert r0["wrapped"] == "CadenceDistributedDataParallel" and r0["world_size"] == 2
    for key in r0["params"]:
        assert np.array_equal(r0["params"][key], r1["params"][key]), key
    assert r0["metrics"] == r1["metrics"]  # evaluated once over 37 samples, broadcast

    # one process with the same global batch (2 ranks x 8) sees the same samples per step
    ddp_cases._register_toys()
    cfg = ddp_cases.config(str(tmp_path / "single"), 16, 2, dict(type="SingleDeviceStrategy"))
    single = Runner.from_cfg(Config(cfg))
    single.train()
    for key, value in single.model.state_dict().items():
        torch.testing.assert_close(torch.from_numpy(r0["params"][key]), value, rtol=1e-4, atol=1e-5)


@pytest.mark.dist
def test_ddp_resume_in_a_fresh_group_then_single_device_evaluation(tmp_path):
    work = str(tmp_path / "run")
    full = run_distributed(ddp_cases.train_ddp, str(tmp_path / "full"), 3, timeout=120)
    run_distributed(ddp_cases.train_ddp, work, 2, timeout=120)
    resumed = run_distributed(ddp_cases.train_ddp, work, 3, True, timeout=120)
    assert resumed[0]["epoch"] == 3
    for key in full[0]["params"]:
        assert np.array_equal(full[0]["params"][key], resumed[0]["params"][key]), key
    # the consolidated checkpoint evaluates on one device
    ddp_cases._register_toys()
    cfg = ddp_cases.config(
        str(tmp_path / "eval"),
        8,
        1,
        dict(type="SingleDeviceStrategy"),
        load_from=os.path.join(work, "epoch_3.pth"),
    )
    metrics = Runner.from_cfg(Config(cfg)).val()
    assert metrics == full[0]["metrics"]


def test_launcher_inference_and_env_parsing():
    assert infer_launcher({"RANK": "1", "WORLD_SIZE": "2", "LOCAL_RANK": "1"}) == "pytorch"
    assert infer_launcher({"SLURM_PROCID": "3", "SLURM_NTASKS": "8"}) == "slurm"
    assert infer_launcher({"OMPI_COMM_WORLD_SIZE": "4"}) == "mpi"
    assert infer_launcher({}) == "none"
    info = process_info(
        "slurm",
        {
            "SLURM_PROCID": "5",
            "SLURM_NTASKS": "8",
            "SLURM_LOCALID": "1",
            "SLURM_NODELIST": "gpu[03-04]",
        },
    )
    assert (info.rank, info.world_size, info.local_rank, info.master_addr) == (5, 8, 1, "gpu03")
    info = process_info(
        "mpi",
        {
            "OMPI_COMM_WORLD_RANK": "2",
            "OMPI_COMM_WORLD_SIZE": "4",
            "OMPI_COMM_WORLD_LOCAL_RANK": "0",
            "MASTER_ADDR": "10.0.0.1",
        },
    )
    assert (info.rank, info.world_size, info.master_addr) == (2, 4, "10.0.0.1")
    with pytest.raises(RuntimeError, match="SLURM_LOCALID"):
        process_info("slurm", {"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "SLURM_NODELIST": "a"})
    with pytest.raises(ValueError, match="Did you mean 'slurm'"):
        process_info("slurn", {})


def test_ddp_without_a_launcher_explains_how_to_start(tmp_path):
    ddp_cases._register_toys()
    cfg = ddp_cases.config(str(tmp_path), 8, 1, dict(type="DDPStrategy"))
    env = {k: v for k, v in os.environ.items()}
    for key in ("RANK", "WORLD_SIZE", "LOCAL_RANK"):
        os.environ.pop(key, None)
    try:
        with pytest.raises(RuntimeError, match="torchrun"):
            Runner.from_cfg(Config(cfg)).train()
    finally:
        os.environ.clear()
        os.environ.update(env)


@pytest.mark.dist
def test_ddp_fp16_compression_with_accumulation_and_clipping(tmp_path):
    r0, r1 = run_distributed(ddp_cases.train_ddp_compressed, str(tmp_path), 3, timeout=120)
    for key in r0["params"]:
        assert np.array_equal(r0["params"][key], r1["params"][key]), key
    assert r0["losses"][-1] < r0["losses"][0]
