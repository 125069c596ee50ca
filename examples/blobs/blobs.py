"""The dataset and model of the blobs example, registered by name.

Gaussian clusters in 16 dimensions: small enough to train in seconds on a
laptop CPU, hard enough (overlapping clusters) that the learning-rate schedule
matters. Configs refer to these classes by name; ``custom_imports`` in
``configs/_base_/default_runtime.py`` imports this module.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.model import BaseModel
from cadence.registry import DATASETS, MODELS


@DATASETS.register_module()
class BlobsDataset(Dataset):
    """``num_classes`` Gaussian clusters; the split seed picks the points, not the centres."""

    def __init__(self, num_samples: int, dim: int = 16, num_classes: int = 8,
                 noise: float = 1.0, split_seed: int = 0) -> None:  # fmt: skip
        centres = torch.randn(num_classes, dim, generator=torch.Generator().manual_seed(2024))
        g = torch.Generator().manual_seed(split_seed)
        self.labels = torch.randint(0, num_classes, (num_samples,), generator=g)
        self.points = 2.5 * centres[self.labels] + noise * torch.randn(
            num_samples, dim, generator=g
        )
        self.metainfo = {"classes": tuple(f"blob{i}" for i in range(num_classes))}

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.points[index], "data_samples": self.labels[index]}


@MODELS.register_module()
class MLPClassifier(BaseModel):
    """An MLP with dropout; ``forward`` follows cadence's (mmengine's) model contract."""

    def __init__(self, in_dim: int, hidden: int, num_classes: int, dropout: float = 0.1,
                 data_preprocessor: Any = None) -> None:  # fmt: skip
        super().__init__(data_preprocessor=data_preprocessor)
        self.backbone = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.LayerNorm(hidden), nn.GELU(), nn.Dropout(dropout),
            nn.Linear(hidden, hidden), nn.GELU(),
        )  # fmt: skip
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor") -> Any:
        logits = self.head(self.backbone(inputs))
        if mode == "tensor":
            return logits
        if mode == "loss":
            return {"loss_cls": F.cross_entropy(logits, data_samples)}
        scores = logits.softmax(dim=-1)
        return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(scores, data_samples)]
