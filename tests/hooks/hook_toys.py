"""A tiny regression problem that the hook tests train through the Runner."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.model import BaseModel


class Ramp(Dataset):
    """``n`` samples: inputs ``(i, i)``, target ``i``."""

    def __init__(self, n: int = 8) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        return {"inputs": torch.full((2,), float(i)), "data_samples": torch.tensor(float(i))}


class Line(BaseModel):
    """One linear unit with a (scaled) MSE loss; predictions are the outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        out = self.fc(inputs).squeeze(-1)
        if mode == "loss":
            return {"loss": F.mse_loss(out, data_samples) * 1e-3}
        return list(out)
