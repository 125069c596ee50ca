"""PreciseBNHook: BatchNorm statistics recomputed over known training samples."""

from __future__ import annotations

import logging

import pytest
import torch
import torch.nn.functional as F
from runner_double import StandInRunner
from torch import nn
from torch.utils.data import DataLoader, Dataset

from cadence.evaluator import BaseMetric
from cadence.hooks import Hook, PreciseBNHook
from cadence.model import BaseModel
from cadence.registry import DATASETS, METRICS, MODELS
from cadence.runner import Runner

X = torch.randn(40, 3, generator=torch.Generator().manual_seed(0)) * 3 + 1


class Known(Dataset):
    def __len__(self) -> int:
        return len(X)

    def __getitem__(self, i: int):
        return {"inputs": X[i], "data_samples": X[i].sum(0, keepdim=True)}


class BNFirst(BaseModel):
    """BatchNorm sees the raw inputs, so its statistics are known in advance."""

    def __init__(self) -> None:
        super().__init__()
        self.bn = nn.BatchNorm1d(3, momentum=0.1)
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(3, 1)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        out = self.fc(self.drop(self.bn(inputs)))
        if mode == "loss":
            return {"loss": F.mse_loss(out, data_samples)}
        return list(out)


@pytest.fixture(autouse=True)
def _toys():
    DATASETS.register_module(module=Known, force=True)
    MODELS.register_module(module=BNFirst, force=True)
    METRICS.register_module(module=Count, force=True)


def expected_stats(batches: list[torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Average of the batch means and of the unbiased batch variances."""
    mean = torch.stack([b.mean(0) for b in batches]).mean(0)
    var = torch.stack([b.var(0, unbiased=True) for b in batches]).mean(0)
    return mean, var


def stand_in(model, loader, epoch=1):
    return StandInRunner(
        model=model, train_dataloader=loader,
        epoch=epoch, iter=10, train_loop_by_epoch=True, logger=logging.getLogger("test"),
    )  # fmt: skip


def test_statistics_equal_the_hand_computed_ones_over_num_samples():
    model = BNFirst()
    bn = model.bn
    bn.running_mean.fill_(7.0)
    bn.num_batches_tracked.fill_(123)
    loader = DataLoader(Known(), batch_size=8, collate_fn=torch.utils.data.default_collate)
    hook = PreciseBNHook(num_samples=20)  # rounded up to 3 whole batches of 8
    runner = stand_in(model, loader)
    hook.before_train(runner)
    hook.before_val_epoch(runner)
    mean, var = expected_stats([X[0:8], X[8:16], X[16:24]])
    torch.testing.assert_close(bn.running_mean, mean, rtol=0, atol=1e-5)
    torch.testing.assert_close(bn.running_var, var, rtol=0, atol=1e-5)
    # not simply the whole data set's statistics, and not what it was
    assert not torch.allclose(bn.running_mean, X.mean(0), atol=1e-3)
    # momentum, the batch counter and the training mode are restored
    assert bn.momentum == 0.1 and int(bn.num_batches_tracked) == 123 and model.training


def test_interval_and_outside_training():
    model = BNFirst()
    loader = DataLoader(Known(), batch_size=8, collate_fn=torch.utils.data.default_collate)
    hook = PreciseBNHook(num_samples=8, interval=2)
    hook.before_val_epoch(stand_in(model, loader, epoch=2))  # not training: nothing
    assert torch.equal(model.bn.running_mean, torch.zeros(3))
    hook.before_train(stand_in(model, loader))
    hook.before_val_epoch(stand_in(model, loader, epoch=3))  # 3 epochs done: not a multiple of 2
    assert torch.equal(model.bn.running_mean, torch.zeros(3))
    hook.before_val_epoch(stand_in(model, loader, epoch=4))
    torch.testing.assert_close(model.bn.running_mean, X[:8].mean(0))


class Recorder(Hook):
    def __init__(self) -> None:
        self.losses: list[float] = []
        self.val_stats: list[torch.Tensor] = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.losses.append(float(outputs["loss"]))

    def before_val_iter(self, runner, batch_idx, data_batch=None):
        if batch_idx == 0:
            self.val_stats.append(runner.model.bn.running_mean.cpu().clone())


class Nothing(Hook):
    pass


class Count(BaseMetric):
    default_prefix = "count"

    def process(self, data_batch, data_samples) -> None:
        self.results.extend(1 for _ in data_samples)

    def compute_metrics(self, results):
        return {"n": len(results)}


def run(tmp_path, hook) -> Recorder:
    loader = dict(
        batch_size=8,
        dataset=dict(type="Known"),
        sampler=dict(type="DefaultSampler", shuffle=True),
        collate_fn=dict(type="default_collate"),
    )
    runner = Runner(
        model=dict(type="BNFirst"), work_dir=str(tmp_path), train_dataloader=loader,
        train_cfg=dict(max_epochs=2), optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        val_dataloader=loader, val_cfg=dict(), val_evaluator=dict(type="Count"),
        custom_hooks=[hook], default_hooks=dict(checkpoint=None), randomness=dict(seed=5),
    )  # fmt: skip
    recorder = Recorder()
    runner.register_hook(recorder)
    runner.train()
    assert len(recorder.losses) == 10 and len(recorder.val_stats) == 2
    return recorder


def test_in_a_run_validation_sees_recomputed_stats_and_training_randomness_is_untouched(tmp_path):
    with_hook = run(tmp_path / "a", PreciseBNHook(num_samples=40))
    without = run(tmp_path / "b", Nothing())
    # all 40 samples, 5 batches of 8 (in the shuffled order: the mean does not depend on it)
    torch.testing.assert_close(with_hook.val_stats[0], X.mean(0), rtol=0, atol=1e-5)
    assert not torch.allclose(without.val_stats[0], X.mean(0), atol=1e-2)
    # dropout draws the same masks afterwards: the hook left the random streams alone
    assert with_hook.losses == without.losses


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="num_samples"):
        PreciseBNHook(num_samples=0)
    with pytest.raises(ValueError, match="interval"):
        PreciseBNHook(interval=0)
