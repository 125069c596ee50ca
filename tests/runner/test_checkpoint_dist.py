"""Per-rank state: two gloo ranks with different RNG streams and buffers each get their own back."""

from __future__ import annotations

import os
import random
import sys
import warnings

import numpy as np
import pytest
import torch

from cadence.dist.testing import run_distributed

HERE = os.path.dirname(os.path.abspath(__file__))


def _runner(work_dir: str, strategy: str):
    sys.path.insert(0, HERE)
    from runner_toys import Blobs, ToyClassifier

    from cadence.config import Config
    from cadence.registry import DATASETS, MODELS
    from cadence.runner import Runner

    DATASETS.register_module(module=Blobs, force=True)
    MODELS.register_module(module=ToyClassifier, force=True)
    cfg = dict(
        model=dict(type="ToyClassifier"),
        work_dir=work_dir,
        train_dataloader=dict(
            batch_size=8,
            dataset=dict(type="Blobs", n=32, seed=0),
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(by_epoch=True, max_epochs=1),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.05)),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=-1, save_last=False)),
        randomness=dict(seed=5, diff_rank_seed=True),
        strategy=dict(type=strategy),
    )
    return Runner.from_cfg(Config(cfg))


def _draw() -> list[float]:
    return [random.random(), float(np.random.rand()), *torch.rand(2).tolist()]


def save_streams(work_dir: str) -> list[float]:
    """Train briefly, save (a collective), and return this rank's next draws."""
    runner = _runner(work_dir, "DDPStrategy")
    runner.train()
    bn = runner.strategy.unwrap(runner.model).backbone[1]
    bn.running_mean.fill_(runner.rank + 1.0)  # a rank-local buffer
    runner.save_checkpoint(work_dir, "streams.pth")
    return _draw()


def resume_streams(work_dir: str) -> list[float]:
    """In fresh processes: scramble every stream, resume, return this rank's next draws."""
    runner = _runner(work_dir + "_resumed", "DDPStrategy")
    runner.train()
    random.seed(123), np.random.seed(123), torch.manual_seed(123)
    runner.resume(os.path.join(work_dir, "streams.pth"))
    draws = _draw()
    bn = runner.strategy.unwrap(runner.model).backbone[1]
    return [*draws, float(bn.running_mean.mean())]


@pytest.mark.dist
@pytest.mark.slow
def test_each_rank_continues_its_own_rng_stream_after_resume(tmp_path):
    work = str(tmp_path / "work")
    expected = run_distributed(save_streams, work, timeout=120)
    assert expected[0] != expected[1]  # the ranks draw different streams
    resumed = run_distributed(resume_streams, work, timeout=120)
    assert [r[:-1] for r in resumed] == expected  # bit for bit, each rank its own
    assert [r[-1] for r in resumed] == [1.0, 2.0]  # each rank its own buffers

    ckpt = torch.load(os.path.join(work, "streams.pth"), weights_only=True)
    assert ckpt["rng"]["world_size"] == 2 and len(ckpt["rng"]["ranks"]) == 2

    # one process resuming a 2-rank checkpoint: rank 0's streams, and a warning
    single = _runner(str(tmp_path / "single"), "SingleDeviceStrategy")
    single.train()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        single.resume(os.path.join(work, "streams.pth"))
    assert _draw() == expected[0]
    assert any("RNG streams of 2 rank(s)" in str(w.message) for w in caught)
