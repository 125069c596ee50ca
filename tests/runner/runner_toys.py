"""A small classification problem and model used by the runner tests."""

from __future__ import annotations

import glob
import os
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.config import Config
from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.runner import Runner


class Blobs(Dataset):
    """``num_classes`` Gaussian clusters in ``dim`` dimensions (deterministic)."""

    def __init__(self, n: int = 256, dim: int = 8, num_classes: int = 4, seed: int = 0,
                 spread: float = 0.6) -> None:  # fmt: skip
        g = torch.Generator().manual_seed(1234)  # same centres for every split
        self.centres = torch.randn(num_classes, dim, generator=g) * 2.0
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, num_classes, (n,), generator=g)
        self.points = self.centres[self.labels] + spread * torch.randn(n, dim, generator=g)
        self.metainfo = {"classes": [f"c{i}" for i in range(num_classes)]}

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.points[index], "data_samples": self.labels[index]}


class ToyClassifier(BaseModel):
    """MLP classifier following the cadence model contract."""

    def __init__(self, in_dim: int = 8, hidden: int = 32, num_classes: int = 4,
                 data_preprocessor: Any = None) -> None:  # fmt: skip
        super().__init__(data_preprocessor=data_preprocessor)
        self.backbone = nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU())
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        x = torch.stack(list(inputs)) if isinstance(inputs, (list, tuple)) else inputs
        logits = self.head(self.backbone(x))
        if mode == "tensor":
            return logits
        labels = torch.as_tensor(data_samples).reshape(-1)
        if mode == "loss":
            return {"loss_cls": F.cross_entropy(logits, labels)}
        scores = logits.softmax(dim=-1)
        return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(scores, labels)]


class CountIters(Hook):
    """Counts the training iterations a run performs."""

    def __init__(self) -> None:
        self.iters = 0

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        self.iters += 1


def train_counting(config: Any) -> tuple[Runner, CountIters]:
    """Train a runner built from ``config``; return it and its iteration count."""
    runner = Runner.from_cfg(config)
    counter = CountIters()
    runner.register_hook(counter)
    runner.train()
    return runner, counter


def log_text(runner: Runner) -> str:
    """Everything the run wrote to its log files."""
    return "".join(open(p).read() for p in glob.glob(os.path.join(runner.log_dir, "*.log")))


def toy_config(work_dir: Any, max_epochs: int = 1, n: int = 64, **overrides: Any) -> Config:
    """A checkpointing run of the toy classifier on Blobs (``n`` samples, batch 16)."""
    cfg: dict[str, Any] = dict(
        model=dict(type="ToyClassifier"),
        work_dir=str(work_dir),
        train_dataloader=dict(
            batch_size=16, dataset=dict(type="Blobs", n=n, seed=0),
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(by_epoch=True, max_epochs=max_epochs),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.05, momentum=0.9)),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)),
        randomness=dict(seed=3),
    )  # fmt: skip
    cfg.update(overrides)
    return Config(cfg)


def register_toys() -> None:
    """Register :class:`Blobs` and :class:`ToyClassifier` (configs name them by type)."""
    from cadence.registry import DATASETS, MODELS

    DATASETS.register_module(module=Blobs, force=True)
    MODELS.register_module(module=ToyClassifier, force=True)
