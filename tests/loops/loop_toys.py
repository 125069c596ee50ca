"""The training-loop tests' toys: a dataset drawing noise from the three global generators,
a model with dropout, hooks that interrupt a run and record what it did, and a config."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner

BATCH = 4


class Jittered(Dataset):
    """Fixed points plus noise from torch's, NumPy's and Python's global generators."""

    def __init__(self, n: int = 16, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.points = torch.randn(n, 4, generator=g)
        self.labels = torch.randint(0, 2, (n,), generator=g)
        self.fetched: list[int] = []

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        self.fetched.append(int(index))
        noise = 0.1 * torch.randn(4) + float(np.random.rand()) * 0.01 + random.random() * 0.01
        return {"inputs": self.points[index] + noise, "data_samples": self.labels[index]}


class DropoutNet(BaseModel):
    def __init__(self, data_preprocessor: Any = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        logits = self.net(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        if mode == "predict":
            scores = logits.softmax(-1)
            return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(scores, data_samples)]
        return logits


def register_toys() -> None:
    """Register the toy dataset and model (a test's autouse fixture calls this)."""
    DATASETS.register_module(module=Jittered, force=True)
    MODELS.register_module(module=DropoutNet, force=True)


class Interrupted(BaseException):
    """Stands for the process dying (raised past the runner, like a kill)."""


class StopBefore(Hook):
    """Interrupt the run just before iteration ``iteration``."""

    priority = "HIGHEST"

    def __init__(self, iteration: int) -> None:
        self.iteration = iteration

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        if runner.iter == self.iteration:
            raise Interrupted


class Record(Hook):
    """Losses of every iteration and the positions at which validation ran."""

    def __init__(self) -> None:
        self.losses: list[float] = []
        self.vals: list[tuple[int, int, float]] = []
        self.rng: torch.Tensor | None = None

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        self.losses.append(float(outputs["loss"]))

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self.vals.append((runner.epoch, runner.iter, float((metrics or {})["accuracy/top1"])))

    def after_train(self, runner: Any) -> None:
        self.rng = torch.get_rng_state()


def loader(n: int = 16, seed: int = 0, sampler: str = "DefaultSampler", **kw: Any) -> dict:
    return dict(batch_size=BATCH, dataset=dict(type="Jittered", n=n, seed=seed),
                sampler=dict(type=sampler, shuffle=True), collate_fn=dict(type="default_collate"),
                **kw)  # fmt: skip


def config(work_dir: Any, name: str, val: bool = False, **overrides: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = dict(
        model=dict(type="DropoutNet"),
        work_dir=str(work_dir),
        experiment_name=name,
        train_dataloader=loader(),
        train_cfg=dict(by_epoch=True, max_epochs=3),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1, momentum=0.9)),
        default_hooks=dict(
            logger=dict(type="LoggerHook", progress="off"),
            checkpoint=dict(type="CheckpointHook", interval=3, by_epoch=False),
        ),
        randomness=dict(seed=11),
        log_level="WARNING",
    )
    if val:
        cfg.update(
            val_dataloader=loader(n=8, seed=1),  # its samples draw from the global generators
            val_cfg=dict(),
            val_evaluator=dict(type="Accuracy"),
        )
    cfg.update(overrides)
    return cfg


def train(cfg: dict[str, Any], stop_before: int | None = None) -> tuple[Runner, Record]:
    runner = Runner.from_cfg(cfg)
    record = Record()
    runner.register_hook(record)
    if stop_before is not None:
        runner.register_hook(StopBefore(stop_before))
        with pytest.raises(Interrupted):
            runner.train()
    else:
        runner.train()
    return runner, record


def assert_same_weights(a: Runner, b: Runner) -> None:
    for (key, x), y in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(x, y), key
