"""A tiny run that both engines execute: mmengine 0.10.7 (in its own venv) and cadence.

The reference recorder (``benchmarks/mmengine_reference/record.py``) imports this
file in a venv where ``mmengine`` is installed; cadence's tests import it where it is
not, and the same classes then come from ``cadence.*``. Every source of randomness a
real config has is here: a shuffled sampler, augmentation with ``random``, numpy and
torch in the dataset (so worker seeding counts), dropout in the model, a new loader
iterator every epoch (it draws from torch's global generator).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import random
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

#: Which engine this process uses: ``mmengine`` where it is importable, else cadence.
ENGINE = os.environ.get("MMENGINE_TOY_ENGINE") or (
    "mmengine" if importlib.util.find_spec("mmengine") is not None else "cadence"
)


def _engine(module: str) -> Any:
    return importlib.import_module(f"{ENGINE}.{module}")


BaseModel = _engine("model").BaseModel
BaseMetric = _engine("evaluator").BaseMetric
Hook = _engine("hooks").Hook
_registry = _engine("registry")
#: Losses seen by :class:`RefLossRecorder`, ``[(iteration, {name: float})]``, per process.
RECORDED: list[tuple[int, dict[str, float]]] = []


class RefToyDataset(torch.utils.data.Dataset):
    """``length`` fixed points (4 features, a class of 3, a regression target), augmented."""

    def __init__(self, length: int = 32) -> None:
        gen = torch.Generator().manual_seed(1234)
        self.points = torch.randn(length, 4, generator=gen)
        self.labels = (self.points[:, 0] > 0).long() + (self.points[:, 1] > 0.5).long()
        self.targets = self.points.sum(dim=1)
        self.metainfo = {"classes": ("low", "mid", "high")}

    def __len__(self) -> int:
        return len(self.points)

    def __getitem__(self, index: int) -> dict[str, Any]:
        noise = float(np.random.rand()) * 0.1 + random.random() * 0.1
        jitter = torch.rand(4) * 0.05
        return {
            "inputs": self.points[index] + noise + jitter,
            "labels": self.labels[index],
            "targets": self.targets[index],
        }


class RefToyModel(BaseModel):
    """Two linear layers with dropout; two loss terms (``loss_cls``, ``loss_reg``)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.drop = nn.Dropout(0.25)
        self.fc2 = nn.Linear(8, 4)

    def forward(
        self, inputs: torch.Tensor, labels: Any = None, targets: Any = None, mode: str = "tensor"
    ) -> Any:
        out = self.fc2(self.drop(torch.relu(self.fc1(inputs))))
        if mode == "loss":
            return {
                "loss_cls": F.cross_entropy(out[:, :3], labels),
                "loss_reg": ((out[:, 3] - targets) ** 2).mean(),
            }
        if mode == "predict":
            return list(zip(out[:, :3].argmax(dim=1).tolist(), labels.tolist()))
        return out


class RefToyAccuracy(BaseMetric):
    """The fraction of correct classes (``accuracy``)."""

    def process(self, data_batch: Any, data_samples: Any) -> None:
        self.results.extend(int(p == t) for p, t in data_samples)

    def compute_metrics(self, results: list) -> dict[str, float]:
        return {"accuracy": sum(results) / len(results)}


class RefLossRecorder(Hook):
    """Records every training iteration's loss terms into :data:`RECORDED`."""

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        RECORDED.append(
            (runner.iter, {k: float(torch.as_tensor(v).detach()) for k, v in outputs.items()})
        )


for _name, _cls in (("MODELS", RefToyModel), ("DATASETS", RefToyDataset),
                    ("METRICS", RefToyAccuracy), ("HOOKS", RefLossRecorder)):  # fmt: skip
    getattr(_registry, _name).register_module(module=_cls, force=True)


def _loader(length: int, batch_size: int, num_workers: int, shuffle: bool, infinite: bool) -> dict:
    sampler = "InfiniteSampler" if infinite else "DefaultSampler"
    return {
        "batch_size": batch_size,
        "num_workers": num_workers,
        "persistent_workers": False,
        "sampler": {"type": sampler, "shuffle": shuffle},
        "collate_fn": {"type": "default_collate"},
        "dataset": {"type": "RefToyDataset", "length": length},
    }


def config(kind: str, work_dir: str, num_workers: int = 0, seed: int = 2024) -> dict[str, Any]:
    """The run of ``kind`` ``'epoch'`` (3 epochs of 8 iterations, a checkpoint per epoch)
    or ``'iter'`` (20 iterations over a 24-sample set, an infinite sampler, a checkpoint
    every 10). Both validate only after iteration 20: cadence's validation leaves
    training's random streams as they were, mmengine's draws from them."""
    by_epoch = kind == "epoch"
    if by_epoch:
        train_cfg: dict[str, Any] = {"by_epoch": True, "max_epochs": 3, "val_interval": 3}
        checkpoint = {"type": "CheckpointHook", "interval": 1}
        logger = {"type": "LoggerHook", "interval": 4}
    else:
        train_cfg = {"type": "IterBasedTrainLoop", "max_iters": 20, "val_interval": 20}
        checkpoint = {"type": "CheckpointHook", "interval": 10, "by_epoch": False}
        logger = {"type": "LoggerHook", "interval": 4}
    return {
        "model": {"type": "RefToyModel"},
        "work_dir": work_dir,
        "train_dataloader": _loader(32 if by_epoch else 24, 4, num_workers, True, not by_epoch),
        "val_dataloader": _loader(8, 4, num_workers, False, False),
        "val_evaluator": {"type": "RefToyAccuracy"},
        "train_cfg": train_cfg,
        "val_cfg": {},
        "optim_wrapper": {"optimizer": {"type": "SGD", "lr": 0.01, "momentum": 0.9}},
        "param_scheduler": {
            "type": "MultiStepLR",
            "milestones": [2] if by_epoch else [15],
            "by_epoch": by_epoch,
        },
        "default_hooks": {"checkpoint": checkpoint, "logger": logger},
        "custom_hooks": [{"type": "RefLossRecorder"}],
        "log_processor": {"by_epoch": by_epoch},
        "randomness": {"seed": seed},
        "env_cfg": {"cudnn_benchmark": False, "dist_cfg": {"backend": "gloo"}},
        "launcher": "none",
    }


def run(kind: str, work_dir: str, num_workers: int = 0, **overrides: Any) -> list:
    """Train the run of ``kind``; return what :class:`RefLossRecorder` saw."""
    Config = _engine("config").Config
    Runner = _engine("runner").Runner
    cfg = config(kind, work_dir, num_workers)
    cfg.update(overrides)
    RECORDED.clear()
    runner = Runner.from_cfg(Config(cfg))
    runner.train()
    return list(RECORDED)
