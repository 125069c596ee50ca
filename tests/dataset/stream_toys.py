"""The model and the batch recorder shared by the stream resume tests."""

from __future__ import annotations

from typing import Any

import torch.nn.functional as F
from torch import nn

from cadence.hooks import Hook
from cadence.model import BaseModel


class Net(BaseModel):
    """A linear classifier of 4 features; ``data_samples`` are the labels."""

    def __init__(self, data_preprocessor: Any = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.net = nn.Linear(4, 2)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor", **_: Any) -> Any:
        logits = self.net(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        return logits


class Seen(Hook):
    """The item ids (``data_batch['i']``) of every batch trained on."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        self.batches.append([int(i) for i in data_batch["i"]])
