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
def test_zero_stage_trains_resumes_and_hands_over_weights(tmp_path, stage, request):
    if stage == 2:  # this stage keeps its run in a bucket (moto's S3) and resumes on another
        # machine (its own staging folder): every rank uploads, then downloads, engine shards
        s3 = request.getfixturevalue("s3")
        work = s3.bucket() + "/run"
        machines = [{**s3.env, "CADENCE_STAGING_DIR": str(tmp_path / m)} for m in "ab"]
        first = run_distributed(dist_cases.train_deepspeed_in, machines[0], work, 1, stage,
                                timeout=300)  # fmt: skip
        shards = [p for p in s3.fs().find(work) if ".pth.ds/" in p]
        assert sum("optim_states" in p for p in shards) == 2, shards  # one file per rank
        resumed = run_distributed(dist_cases.train_deepspeed_in, machines[1], work, 2, stage,
                                  True, timeout=300)  # fmt: skip
        assert s3.fs().cat_file(f"{work}/last_checkpoint") == b"epoch_2.pth"
    else:
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


@pytest.mark.dist
def test_deepspeed_steps_the_optimizer_cadence_built_with_paramwise_cfg(tmp_path):
    groups = run_distributed(dist_cases.deepspeed_param_groups, str(tmp_path), timeout=300)
    assert groups[0] == groups[1]
    # one group per parameter (DefaultOptimWrapperConstructor with paramwise_cfg), each
    # holding its half of the parameter under ZeRO-1: backbone weight, backbone bias (no
    # decay), head weight and bias (lr x 0.5; as in mmengine, a matching custom key's rule
    # replaces bias_decay_mult)
    assert groups[0] == [(0.1, 0.01, 64), (0.1, 0.0, 8), (0.05, 0.01, 32), (0.05, 0.01, 2)]


def test_deepspeed_config_optimizer_wins_with_a_warning_naming_the_ignored_keys():
    from torch import nn

    from cadence.optim import build_optim_wrapper
    from cadence.strategies import DeepSpeedStrategy

    cfg = dict(type="AmpOptimWrapper", optimizer=dict(type="SGD", lr=0.1, weight_decay=0.1),
               paramwise_cfg=dict(bias_decay_mult=0.0), accumulative_counts=2)  # fmt: skip
    named = DeepSpeedStrategy(config={"optimizer": {"type": "AdamW", "params": {"lr": 1e-3}}})
    with pytest.warns(
        UserWarning,
        match=r"names an optimizer \(AdamW\), so DeepSpeed builds it "
        r"and optim_wrapper.optimizer, optim_wrapper.paramwise_cfg are ignored",
    ):
        ds_cfg = named.optim_wrapper_config(cfg)
    assert named._client_optimizer(build_optim_wrapper(nn.Linear(2, 2), ds_cfg)) is None
    plain = DeepSpeedStrategy()
    # the wrapper's type does not apply (the engine does its work); accumulation stays
    assert plain.optim_wrapper_config(cfg) == {**cfg, "type": "OptimWrapper"}
    built = build_optim_wrapper(nn.Linear(2, 2), plain.optim_wrapper_config(cfg))
    assert built.accumulative_counts == 2
    optimizer = plain._client_optimizer(built)
    assert optimizer is built.optimizer and isinstance(optimizer, torch.optim.SGD)
    assert [g["weight_decay"] for g in optimizer.param_groups] == [0.1, 0.0]  # weight, bias


def test_deepspeed_takes_one_optimizer():
    from torch import nn

    from cadence.optim import build_optim_wrapper
    from cadence.strategies import DeepSpeedStrategy

    model = nn.ModuleDict({"g": nn.Linear(2, 2), "d": nn.Linear(2, 2)})
    sgd = dict(optimizer=dict(type="SGD", lr=0.1))
    cfg = dict(g=sgd, d=sgd)
    with pytest.raises(ValueError, match="trains with one optimizer"):
        DeepSpeedStrategy().optim_wrapper_config(cfg)
    with pytest.raises(ValueError, match="builds a OptimWrapperDict"):
        DeepSpeedStrategy()._client_optimizer(build_optim_wrapper(model, cfg))


@pytest.mark.dist
def test_model_and_val_before_train_then_train_with_the_optimizer(tmp_path):
    out = run_distributed(dist_cases.deepspeed_model_before_train, str(tmp_path), timeout=300)
    for rank in out:
        assert rank["val_before_train"] == ["accuracy/top1"]
        assert rank["new_engine"]  # the evaluation engine was replaced by one that trains
        assert rank["engine_optimizer"] == "DeepSpeedZeroOptimizer"  # ZeRO-2 over SGD
        assert rank["optim_wrapper"] == "DeepSpeedOptimWrapper"
        assert rank["changed"] == rank["keys"]  # training moved every weight
