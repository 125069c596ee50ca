"""Resuming with a longer run: ``train_cfg.resume_policy`` 'keep' vs 'stretch'."""

from __future__ import annotations

import math
import os
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.optim.scheduler import CosineAnnealingLR, LinearLR
from cadence.optim.scheduler.resume_policy import stretch
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner


class Ramp(torch.utils.data.Dataset):
    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"inputs": torch.full((2,), float(i)), "data_samples": torch.tensor(float(i))}


class Line(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        out = self.fc(inputs).squeeze(-1)
        return {"loss": F.mse_loss(out, data_samples) * 1e-3} if mode == "loss" else list(out)


def schedules(max_epochs: int, epoch_length: int) -> tuple[torch.optim.SGD, list[Any]]:
    """An iteration warm-up of 3 and a by-epoch cosine over the whole run."""
    optimizer = torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=1.0)
    return optimizer, [
        LinearLR(optimizer, start_factor=0.1, by_epoch=False, begin=0, end=3),
        CosineAnnealingLR(optimizer, T_max=max_epochs, by_epoch=True, begin=0, end=max_epochs),
    ]


def train(schedulers: list[Any], epochs: int, epoch_length: int) -> None:
    """Step them as ParamSchedulerHook does: iteration ones each iteration, epoch ones after
    each epoch."""
    for _ in range(epochs):
        for _ in range(epoch_length):
            for s in schedulers:
                if not s.by_epoch:
                    s.step()
        for s in schedulers:
            if s.by_epoch:
                s.step()


def test_stretch_gives_the_values_of_a_run_planned_that_long():
    optimizer, schedulers = schedules(max_epochs=4, epoch_length=2)
    train(schedulers, 3, 2)
    old, new = dict(max_epochs=4, max_iters=8), dict(max_epochs=10, max_iters=20)
    assert stretch(schedulers, old, new, epoch_length=2) == [schedulers[1]]  # not the warm-up
    planned_opt, planned = schedules(max_epochs=10, epoch_length=2)
    train(planned, 3, 2)
    assert optimizer.param_groups[0]["lr"] == pytest.approx(planned_opt.param_groups[0]["lr"])
    assert (schedulers[1].end, schedulers[1].T_max) == (10, 10)
    train(schedulers, 7, 2), train(planned, 7, 2)  # and they go on together
    assert optimizer.param_groups[0]["lr"] == pytest.approx(planned_opt.param_groups[0]["lr"])


class RecordLR(Hook):
    def __init__(self) -> None:
        self.lrs: list[float] = []

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        self.lrs.append(runner.optim_wrapper.get_lr()["lr"][0])


@pytest.fixture(autouse=True)
def _toys() -> None:
    DATASETS.register_module(module=Ramp, force=True)
    MODELS.register_module(module=Line, force=True)


def run(work_dir: Any, max_epochs: int, **kwargs: Any) -> tuple[Runner, RecordLR]:
    recorder = RecordLR()
    runner = Runner(
        model=dict(type="Line"), work_dir=str(work_dir), log_level="WARNING",
        train_dataloader=dict(batch_size=2, dataset=dict(type="Ramp"),
                              sampler=dict(type="DefaultSampler", shuffle=False),
                              collate_fn=dict(type="default_collate")),
        train_cfg=dict(max_epochs=max_epochs, resume_policy=kwargs.pop("policy", "keep")),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        param_scheduler=dict(type="CosineAnnealingLR", T_max=2, end=2, by_epoch=True,
                             convert_to_iter_based=True),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=2)),
        custom_hooks=[recorder], **kwargs,
    )  # fmt: skip
    runner.train()
    return runner, recorder


@pytest.mark.parametrize("policy", ["keep", "stretch"])
def test_resuming_with_more_epochs_continues_the_run(tmp_path, policy):
    run(tmp_path / "first", max_epochs=2)  # 2 epochs of 2 iterations: cosine over 4 iterations
    checkpoint = os.path.join(str(tmp_path / "first"), "epoch_2.pth")
    runner, recorder = run(tmp_path / policy, max_epochs=4, resume=checkpoint, policy=policy)
    assert (runner.epoch, runner.iter) == (4, 8)
    if policy == "keep":  # the schedule ended at iteration 4: the LR stays at its last value
        expected = [0.1 * (1 + math.cos(math.pi * 3 / 4)) / 2] * 4
    else:  # the cosine of a run planned for 8 iterations, from its 5th iteration on
        expected = [0.1 * (1 + math.cos(math.pi * k / 8)) / 2 for k in range(4, 8)]
    assert recorder.lrs == pytest.approx(expected)


def test_a_bad_policy_names_the_key(tmp_path):
    with pytest.raises(ValueError, match="train_cfg.resume_policy must be 'keep' or 'stretch'"):
        run(tmp_path, max_epochs=1, policy="extend")
