"""``on_repeated='rollback'``: the model and optimizer go back to the last checkpoint and
training goes on with the next batches."""

from __future__ import annotations

import math
import os

import pytest
import torch
from hook_toys import Line, Ramp

from cadence.checkpoint import read_checkpoint
from cadence.hooks import Hook
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner


class Poisoned(Line):
    """``Line`` whose loss is NaN while ``poisoned`` (its gradients stay finite)."""

    poisoned = False

    def forward(self, inputs, data_samples=None, mode="tensor"):
        out = super().forward(inputs, data_samples, mode)
        if mode == "loss" and self.poisoned:
            out["loss"] = out["loss"] + math.nan
        return out


class PoisonAt(Hook):
    """Poison the loss of the 0-based iterations ``bad``; keep the weights after each."""

    def __init__(self, bad: set[int]) -> None:
        self.bad, self.weights = bad, {}

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        runner.model.poisoned = runner.iter in self.bad

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.weights[runner.iter] = runner.model.fc.weight.detach().clone()


@pytest.fixture(autouse=True)
def _toys() -> None:
    DATASETS.register_module(module=Ramp, force=True)
    MODELS.register_module(module=Poisoned, force=True)


def test_rollback_restores_the_last_checkpoint_and_training_goes_on(tmp_path):
    poison = PoisonAt({5, 6})
    runner = Runner(
        model=dict(type="Poisoned"), work_dir=str(tmp_path), log_level="WARNING",
        train_dataloader=dict(
            batch_size=2, dataset=dict(type="Ramp", n=16), sampler=dict(type="DefaultSampler"),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(by_epoch=False, max_iters=8),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01), skip_nonfinite=True,
                           max_consecutive=2, on_repeated="rollback"),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=4, by_epoch=False)),
        custom_hooks=[poison],
    )  # fmt: skip
    runner.train()
    saved = read_checkpoint(os.path.join(str(tmp_path), "iter_4.pth"))["state_dict"]["fc.weight"]
    w = poison.weights
    assert not torch.equal(w[4], saved)  # iteration 4 (0-based) trained past the checkpoint
    assert torch.equal(w[5], w[4])  # the first bad step is skipped
    assert torch.equal(w[6], saved)  # the second one rolls back to iter_4.pth
    assert not torch.equal(w[7], w[6]) and runner.iter == 8  # and training goes on
    guard = runner.optim_wrapper.nonfinite_guard
    assert (guard.skipped, guard.consecutive) == (2, 0)
