"""EMAHook: the average it keeps, validation with averaged weights, checkpoints and resume."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from runner_double import StandInRunner
from torch import nn
from torch.utils.data import Dataset

from cadence.hooks import EMAHook, Hook
from cadence.model import BaseModel, ExponentialMovingAverage
from cadence.registry import DATASETS, HOOKS, MODELS
from cadence.runner import Runner


class Points(Dataset):
    def __init__(self, n: int = 48, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 4, generator=g)
        self.y = (self.x.sum(1) > 0).long()

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int):
        return {"inputs": self.x[i], "data_samples": self.y[i]}


class TinyNet(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.body(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        scores = logits.softmax(-1)
        return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(scores, data_samples)]


@pytest.fixture(autouse=True)
def _toys():
    DATASETS.register_module(module=Points, force=True)
    MODELS.register_module(module=TinyNet, force=True)


def params(model: nn.Module) -> dict[str, torch.Tensor]:
    return {k: p.detach().cpu().clone() for k, p in model.named_parameters()}


class Watcher(Hook):
    """Snapshots the weights after each step, during validation and after it."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.steps: list[dict[str, torch.Tensor]] = []
        self.during_val: list[dict[str, torch.Tensor]] = []
        self.post_val: list[dict[str, torch.Tensor]] = []

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.steps.append(params(runner.model))

    def before_val_iter(self, runner, batch_idx, data_batch=None):
        if batch_idx == 0:
            self.during_val.append(params(runner.model))

    def after_val(self, runner):
        self.post_val.append(params(runner.model))


def make_runner(tmp_path, epochs=2, ema=None, **overrides) -> tuple[Runner, Watcher]:
    loader = dict(
        batch_size=16,
        dataset=dict(type="Points"),
        sampler=dict(type="DefaultSampler", shuffle=True),
        collate_fn=dict(type="default_collate"),
    )
    cfg = dict(
        model=dict(type="TinyNet"),
        work_dir=str(tmp_path),
        train_dataloader=loader,
        train_cfg=dict(max_epochs=epochs),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.5, momentum=0.9)),
        val_dataloader={**loader, "sampler": dict(type="DefaultSampler", shuffle=False)},
        val_cfg=dict(),
        val_evaluator=dict(type="Accuracy"),
        custom_hooks=[ema or dict(type="EMAHook", momentum=0.2)],
        randomness=dict(seed=1),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=100)),
    )
    cfg.update(overrides)
    runner = Runner(**cfg)
    watcher = Watcher()
    runner.register_hook(watcher)
    return runner, watcher


def ema_recurrence(snapshots, m):
    ema = dict(snapshots[0])
    for snap in snapshots[1:]:
        ema = {k: (1 - m) * ema[k].double() + m * snap[k].double() for k in snap}
    return ema


def close(a, b, atol=1e-6):
    return all(torch.allclose(a[k].double(), b[k].double(), rtol=0, atol=atol) for k in a)


def test_stand_in_runner_copies_before_begin_iter_then_averages():
    model = nn.Linear(3, 2)
    runner = StandInRunner(model=model, iter=0)
    hook = EMAHook(momentum=0.5, begin_iter=2)
    hook.before_run(runner)
    snaps = []
    for it in range(5):
        with torch.no_grad():
            model.weight.add_(float(it + 1))
        snaps.append(params(model))
        runner.iter = it
        hook.after_train_iter(runner, batch_idx=it)
        if it == 0:  # before begin_iter the average is the model itself
            assert close(params(hook.ema_model.module), snaps[0], atol=0)
    # averaging starts at iteration index 1 (runner.iter + 1 >= 2): copy, then two updates
    expected = ema_recurrence(snaps[1:], 0.5)
    assert close(params(hook.ema_model.module), expected)


def test_training_averages_validation_uses_the_average_and_training_keeps_raw_weights(tmp_path):
    runner, watcher = make_runner(tmp_path, epochs=2)
    runner.train()
    steps = len(watcher.steps)
    assert steps == 6  # 48 samples / 16 per batch * 2 epochs
    hook = next(h for h in runner.hooks if isinstance(h, EMAHook))
    expected = ema_recurrence(watcher.steps, 0.2)
    assert close(params(hook.ema_model.module), expected)
    # validation after epoch 1 saw the average of the first 3 steps ...
    assert close(watcher.during_val[0], ema_recurrence(watcher.steps[:3], 0.2))
    assert not close(watcher.during_val[0], watcher.steps[2])
    # ... and the raw weights came back afterwards, so training went on from them
    for k, v in watcher.post_val[0].items():
        assert torch.equal(v, watcher.steps[2][k]), k
    for k, v in params(runner.model).items():
        assert torch.equal(v, watcher.steps[-1][k]), k


def test_checkpoint_holds_averaged_weights_and_load_from_evaluates_them(tmp_path):
    runner, watcher = make_runner(tmp_path / "a", epochs=1)
    runner.train()
    hook = next(h for h in runner.hooks if isinstance(h, EMAHook))
    ckpt = torch.load(tmp_path / "a" / "epoch_1.pth", weights_only=True)
    raw = watcher.steps[-1]
    averaged = params(hook.ema_model.module)
    for k in raw:
        assert torch.equal(ckpt["state_dict"][k], averaged[k]), k
        assert torch.equal(ckpt["ema_state_dict"][f"module.{k}"], raw[k]), k
    assert int(ckpt["ema_state_dict"]["steps"]) == 3

    # a fresh runner loading the checkpoint validates with the averaged weights
    fresh, fresh_watcher = make_runner(tmp_path / "b", load_from=str(tmp_path / "a/epoch_1.pth"))
    fresh.val()
    assert close(fresh_watcher.during_val[0], averaged, atol=0)


def test_resume_restores_model_and_average_exactly(tmp_path):
    full, _ = make_runner(tmp_path / "full", epochs=2)
    full.train()
    part, _ = make_runner(tmp_path / "part", epochs=1)
    part.train()
    resumed, watcher = make_runner(tmp_path / "part", epochs=2, resume=True)
    resumed.train()
    assert len(watcher.steps) == 3  # only the second epoch ran
    ema_of = {id(r): next(h for h in r.hooks if isinstance(h, EMAHook)) for r in (full, resumed)}
    for name, value in full.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[name]), name
    a, b = ema_of[id(full)].ema_model.state_dict(), ema_of[id(resumed)].ema_model.state_dict()
    for name, value in a.items():
        assert torch.equal(value, b[name]), name


def test_begin_epoch_and_errors():
    with pytest.raises(ValueError, match="not both"):
        EMAHook(begin_iter=1, begin_epoch=1)
    with pytest.raises(ValueError, match=">= 0"):
        EMAHook(begin_iter=-1)
    hook = EMAHook(begin_epoch=3)
    with pytest.raises(ValueError, match="after the last epoch"):
        hook.before_train(StandInRunner(max_epochs=2, max_iters=10))
    assert isinstance(HOOKS.build(dict(type="EMAHook", momentum=0.1)), EMAHook)
    model = nn.Linear(2, 2)
    runner = StandInRunner(model=model)
    hook = EMAHook(ema_type="ExponentialMovingAverge")
    with pytest.raises(KeyError, match="ExponentialMovingAverage"):
        hook.before_run(runner)
    built = EMAHook(momentum=0.3)
    built.before_run(runner)
    assert isinstance(built.ema_model, ExponentialMovingAverage) and built.ema_model.momentum == 0.3
