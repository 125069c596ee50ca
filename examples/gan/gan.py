"""A tiny GAN on 2-D points: two optimizers (``OptimWrapperDict``) and a custom ``train_step``.

The data are points around a ring of Gaussian modes (generated with a fixed
seed: this example is about the API, not the data). ``optim_wrapper`` in the
config has one entry per sub-module, ``generator`` and ``discriminator``, so the
runner builds an ``OptimWrapperDict``; ``RingGAN.train_step`` updates each
sub-module with its own wrapper. ``ModeCoverage`` scores generated samples.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.evaluator import BaseMetric
from cadence.model import BaseModel
from cadence.registry import DATASETS, METRICS, MODELS


def ring_modes(num_modes: int, radius: float) -> torch.Tensor:
    """The ``(num_modes, 2)`` centres of the ring."""
    angles = torch.arange(num_modes, dtype=torch.float32) * (2 * math.pi / num_modes)
    return radius * torch.stack([angles.cos(), angles.sin()], dim=1)


@DATASETS.register_module()
class RingDataset(Dataset):
    """``num_samples`` points drawn around ``num_modes`` centres on a circle."""

    def __init__(self, num_samples: int, num_modes: int = 8, radius: float = 2.0,
                 std: float = 0.05, seed: int = 0) -> None:  # fmt: skip
        g = torch.Generator().manual_seed(seed)
        modes = torch.randint(0, num_modes, (num_samples,), generator=g)
        noise = std * torch.randn(num_samples, 2, generator=g)
        self.points = ring_modes(num_modes, radius)[modes] + noise

    def __len__(self) -> int:
        return len(self.points)

    def __getitem__(self, index: int) -> dict[str, Any]:
        return {"inputs": self.points[index]}


def mlp(sizes: Sequence[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(nn.LeakyReLU(0.2))
    return nn.Sequential(*layers)


@MODELS.register_module()
class RingGAN(BaseModel):
    """Generator and discriminator MLPs; one discriminator then one generator step per batch.

    ``optim_wrapper`` is an ``OptimWrapperDict`` with ``'generator'`` and
    ``'discriminator'`` entries (built from the config's ``optim_wrapper``).
    """

    def __init__(self, noise_dim: int = 8, hidden: int = 128,
                 data_preprocessor: Any = None) -> None:  # fmt: skip
        super().__init__(data_preprocessor=data_preprocessor)
        self.noise_dim = noise_dim
        self.generator = mlp([noise_dim, hidden, hidden, 2])
        self.discriminator = mlp([2, hidden, hidden, 1])

    def sample(self, num: int) -> torch.Tensor:
        """``num`` generated points."""
        device = next(self.generator.parameters()).device
        return self.generator(torch.randn(num, self.noise_dim, device=device))

    def train_step(self, data: Any, optim_wrapper: Any) -> OrderedDict[str, torch.Tensor]:
        real = self.data_preprocessor(data, True)["inputs"]
        d_wrapper, g_wrapper = optim_wrapper["discriminator"], optim_wrapper["generator"]
        with d_wrapper.optim_context(self.discriminator):
            fake = self.sample(len(real)).detach()
            real_logits, fake_logits = self.discriminator(real), self.discriminator(fake)
            loss_d = F.binary_cross_entropy_with_logits(
                real_logits, torch.ones_like(real_logits)
            ) + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))
        d_wrapper.update_params(loss_d)
        with g_wrapper.optim_context(self.generator):
            logits = self.discriminator(self.sample(len(real)))
            loss_g = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits))
        g_wrapper.update_params(loss_g)
        # The discriminator's parameters got gradients from the generator's loss: drop them.
        d_wrapper.zero_grad()
        return OrderedDict(loss_d=loss_d.detach(), loss_g=loss_g.detach())

    def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor") -> Any:
        fake = self.sample(len(inputs))
        if mode == "predict":
            return [{"fake": point} for point in fake]
        return fake


@METRICS.register_module()
class ModeCoverage(BaseMetric):
    """How many ring modes the generated points cover, and the share of points near a mode.

    A point is near a mode when it lies within ``3 * std`` of its centre; a mode
    is covered when at least ``min_share`` of the points are near it.
    """

    default_prefix = "ring"

    def __init__(self, num_modes: int = 8, radius: float = 2.0, std: float = 0.05,
                 min_share: float = 0.01, **kwargs: Any) -> None:  # fmt: skip
        super().__init__(**kwargs)
        self.modes = ring_modes(num_modes, radius)
        self.threshold = 3 * std
        self.min_share = min_share

    def process(self, data_batch: Any, data_samples: Sequence[dict[str, Any]]) -> None:
        self.results.extend(sample["fake"].cpu() for sample in data_samples)

    def compute_metrics(self, results: list[Any]) -> dict[str, float]:
        points = torch.stack(results)
        distance, nearest = torch.cdist(points, self.modes).min(dim=1)
        near = distance < self.threshold
        counts = torch.bincount(nearest[near], minlength=len(self.modes))
        covered = int((counts >= self.min_share * len(points)).sum())
        return {"modes": float(covered), "near_share": float(near.float().mean())}
