"""What the sweep tests' configs import (``custom_imports``): a tiny classification run.

Two Gaussian clusters in 4 dimensions and a linear classifier: a trial of a few
dozen iterations trains in a fraction of a second, and its accuracy depends on
the learning rate, so the sweep has something to find.
"""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.registry import DATASETS, HOOKS, MODELS


@DATASETS.register_module()
class TwoBlobs(Dataset):
    """``n`` points of two clusters (deterministic for a ``seed``)."""

    def __init__(self, n: int = 64, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, 2, (n,), generator=g)
        centres = torch.tensor([[1.0, 1.0, 0.0, 0.0], [-1.0, -1.0, 0.0, 0.0]])
        self.points = centres[self.labels] + 0.8 * torch.randn(n, 4, generator=g)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.points[index], "data_samples": self.labels[index]}


@MODELS.register_module()
class LinearClassifier(BaseModel):
    """One linear layer; predictions in the form the ``Accuracy`` metric reads."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        logits = self.fc(inputs)
        if mode == "tensor":
            return logits
        labels = torch.as_tensor(data_samples).reshape(-1)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, labels)}
        return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(logits.softmax(-1), labels)]


@HOOKS.register_module()
class SlowDown(Hook):
    """Sleep ``delay`` seconds after each training iteration (so a trial lasts a while)."""

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        time.sleep(self.delay)
