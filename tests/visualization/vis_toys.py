"""A tiny dataset, model and dataloader config for the runner-level visualization tests."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.model import BaseModel
from cadence.registry import DATASETS, MODELS


class TinyBlobs(Dataset):
    """Four Gaussian clusters in 8 dimensions (deterministic)."""

    def __init__(self, n: int = 128, seed: int = 0) -> None:
        centres = torch.randn(4, 8, generator=torch.Generator().manual_seed(1234)) * 2.0
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, 4, (n,), generator=g)
        self.points = centres[self.labels] + 0.6 * torch.randn(n, 8, generator=g)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.points[index], "data_samples": self.labels[index]}


class TinyClassifier(BaseModel):
    """A small MLP following the cadence model contract."""

    def __init__(self, data_preprocessor: Any = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        logits = self.net(inputs)
        if mode == "tensor":
            return logits
        labels = torch.as_tensor(data_samples).reshape(-1)
        if mode == "loss":
            return {"loss_cls": F.cross_entropy(logits, labels)}
        return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(logits.softmax(-1), labels)]


def register_toys() -> None:
    """Register the toys (the registries are restored after each test)."""
    DATASETS.register_module(module=TinyBlobs, force=True)
    MODELS.register_module(module=TinyClassifier, force=True)


def loader(n: int, seed: int, batch_size: int, shuffle: bool) -> dict[str, Any]:
    """A dataloader config over ``TinyBlobs(n, seed)``."""
    return dict(
        batch_size=batch_size,
        dataset=dict(type="TinyBlobs", n=n, seed=seed),
        sampler=dict(type="DefaultSampler", shuffle=shuffle),
        collate_fn=dict(type="default_collate"),
    )
