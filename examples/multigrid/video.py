"""The synthetic video dataset and the small video model of the multigrid example.

Each clip is a bright square moving across a noisy background in one of four
directions (the class). Clips are stored at the base shape (16 frames of 32x32)
and resampled on the fly to the frames/crop size a multigrid schedule asks for
(:class:`cadence.dataset.multigrid.MultigridDataset`). Small enough to train in
seconds on a CPU.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.dataset.multigrid import split_index
from cadence.model import BaseModel
from cadence.registry import DATASETS, MODELS

DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1))  # right, left, down, up


@DATASETS.register_module()
class MovingSquares(Dataset):
    """``num_samples`` clips [1, frames, size, size]; the label is the direction of motion."""

    def __init__(self, num_samples: int, frames: int = 16, size: int = 32, noise: float = 0.3,
                 seed: int = 0) -> None:  # fmt: skip
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, len(DIRECTIONS), (num_samples,), generator=g)
        starts = torch.randint(0, size - 8, (num_samples, 2), generator=g)
        clips = noise * torch.randn(num_samples, 1, frames, size, size, generator=g)
        for i, (label, (y, x)) in enumerate(zip(self.labels.tolist(), starts.tolist())):
            dx, dy = DIRECTIONS[label]
            y, x = y + 8 * (dy < 0), x + 8 * (dx < 0)  # room to move
            for t in range(frames):
                cy, cx = y + dy * t // 2, x + dx * t // 2
                clips[i, 0, t, cy : cy + 8, cx : cx + 8] += 1.0
        self.clips = clips
        self.frames, self.crop_size = frames, size
        self.metainfo = {"classes": ("right", "left", "down", "up")}

    def set_multigrid_shape(self, frames: int, crop_size: int) -> None:
        """Serve clips of ``frames`` frames at ``crop_size`` from now on (multigrid protocol)."""
        self.frames, self.crop_size = frames, crop_size

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: Any) -> dict[str, Any]:
        i, crop = split_index(index)  # a short cycle may ask for a smaller crop
        size = crop or self.crop_size
        clip = self.clips[i]
        steps = torch.linspace(0, clip.shape[1] - 1, self.frames).round().long()
        clip = clip[:, steps]
        if size != clip.shape[-1]:
            clip = F.interpolate(clip, size=(size, size), mode="bilinear", align_corners=False)
        return {"inputs": clip, "data_samples": self.labels[i]}


@MODELS.register_module()
class TinyVideoNet(BaseModel):
    """Pool each frame to a 4x4 grid, then convolve over time: any frames and crop size."""

    def __init__(
        self, num_classes: int = 4, width: int = 32, data_preprocessor: Any = None
    ) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.temporal = nn.Sequential(
            nn.Conv1d(16, width, 3, padding=1), nn.BatchNorm1d(width), nn.GELU(),
            nn.Conv1d(width, width, 3, padding=1), nn.BatchNorm1d(width), nn.GELU(),
        )  # fmt: skip
        self.head = nn.Linear(width, num_classes)

    def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor") -> Any:
        b, _, t = inputs.shape[:3]
        grid = F.adaptive_avg_pool3d(inputs, (t, 4, 4))  # [B, 1, T, 4, 4]
        x = grid.reshape(b, t, 16).transpose(1, 2)  # [B, 16, T]
        x = (x[:, :, 1:] - x[:, :, :-1]) * t  # motion between frames, per frame-rate
        logits = self.head(self.temporal(x).mean(dim=2))
        if mode == "tensor":
            return logits
        if mode == "loss":
            return {"loss_cls": F.cross_entropy(logits, data_samples)}
        scores = logits.softmax(dim=-1)
        return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(scores, data_samples)]
