"""The dataset, transforms and model of the digits example, registered by name.

The data are the 1797 8x8 handwritten digits that ship inside scikit-learn
(``sklearn.datasets.load_digits``: no download). A fixed permutation splits them
into train / val / test, so every run sees the same split. Configs refer to
these classes by name; ``custom_imports`` in ``configs/_base_/default_runtime.py``
imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.model import BaseModel
from cadence.registry import DATASETS, MODELS, TRANSFORMS

#: Fractions of the shuffled data in each split (the rest of the data is the test split).
SPLITS = {"train": (0.0, 0.7), "val": (0.7, 0.8), "test": (0.8, 1.0)}


def build_pipeline(steps: Sequence[Any]) -> list[Callable[[dict[str, Any]], dict[str, Any]]]:
    """Build each step of a pipeline: a ``TRANSFORMS`` config or a callable."""
    return [TRANSFORMS.build(step) if isinstance(step, dict) else step for step in steps]


@TRANSFORMS.register_module()
class RandomShift:
    """Shift the ``img`` by up to ``max_shift`` pixels in each direction (zero fill)."""

    def __init__(self, max_shift: int = 1) -> None:
        self.max_shift = max_shift

    def __call__(self, results: dict[str, Any]) -> dict[str, Any]:
        img = results["img"]
        m = self.max_shift
        padded = np.pad(img, m)
        dy, dx = np.random.randint(0, 2 * m + 1, size=2)
        results["img"] = padded[dy : dy + img.shape[0], dx : dx + img.shape[1]]
        return results


@TRANSFORMS.register_module()
class AddNoise:
    """Add Gaussian noise of ``std`` (pixel units, 0..16) to the ``img``; the noise of each
    sample is fixed (drawn from ``seed`` and its ``sample_idx``), so every validation
    sees the same noisy images."""

    def __init__(self, std: float = 4.0, seed: int = 0) -> None:
        self.std, self.seed = std, seed

    def __call__(self, results: dict[str, Any]) -> dict[str, Any]:
        rng = np.random.default_rng((self.seed, int(results["sample_idx"])))
        img = results["img"]
        results["img"] = (img + rng.normal(0.0, self.std, img.shape)).astype(np.float32)
        return results


@TRANSFORMS.register_module()
class PackDigitInputs:
    """``dict(img=(8, 8) array[, gt_label=int])`` -> ``dict(inputs=(1, 8, 8) tensor[,
    data_samples=label])``, the sample format the model and collate function expect."""

    def __call__(self, results: dict[str, Any]) -> dict[str, Any]:
        img = torch.as_tensor(np.asarray(results["img"], dtype=np.float32))
        packed: dict[str, Any] = {"inputs": img.reshape(1, *img.shape[-2:])}
        if results.get("gt_label") is not None:
            packed["data_samples"] = int(results["gt_label"])
        return packed


@DATASETS.register_module()
class DigitsDataset(Dataset):
    """One split of scikit-learn's 8x8 digits; pixel values are 0..16.

    Args:
        split: ``'train'``, ``'val'`` or ``'test'`` (70/10/20 percent of the data).
        pipeline: transforms applied to ``dict(img=..., gt_label=...)``.
        split_seed: seed of the permutation that assigns images to splits.
    """

    def __init__(self, split: str, pipeline: Sequence[Any] = (), split_seed: int = 0) -> None:
        from sklearn.datasets import load_digits  # the `examples` extra

        if split not in SPLITS:
            raise ValueError(f"split must be one of {sorted(SPLITS)}, got {split!r}")
        images, labels = load_digits(return_X_y=True)
        order = np.random.default_rng(split_seed).permutation(len(labels))
        start, stop = (round(f * len(labels)) for f in SPLITS[split])
        self.indices = order[start:stop]  # positions in load_digits()
        self.images = images[self.indices].reshape(-1, 8, 8).astype(np.float32)
        self.labels = labels[self.indices].astype(np.int64)
        self.pipeline = build_pipeline(pipeline)
        self.metainfo = {"classes": tuple(str(i) for i in range(10))}

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        results: dict[str, Any] = {
            "img": self.images[index], "gt_label": self.labels[index], "sample_idx": index,
        }  # fmt: skip
        for transform in self.pipeline:
            results = transform(results)
        return results


@MODELS.register_module()
class DigitsCNN(BaseModel):
    """Three 3x3 conv blocks and a linear head; ``forward`` follows the model contract.

    In ``'predict'`` mode it returns one dict per image with ``pred_score``
    (softmax), ``pred_label`` and, when labels were given, ``gt_label``.
    """

    def __init__(self, channels: int = 32, num_classes: int = 10, dropout: float = 0.1,
                 data_preprocessor: Any = None, init_cfg: Any = None) -> None:  # fmt: skip
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        c = channels

        def block(cin: int, cout: int) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]

        self.backbone = nn.Sequential(
            *block(1, c), *block(c, c), nn.MaxPool2d(2),  # 8x8 -> 4x4
            *block(c, 2 * c), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )  # fmt: skip
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(2 * c, num_classes))

    def forward(self, inputs: torch.Tensor, data_samples: Any = None, mode: str = "tensor") -> Any:
        logits = self.head(self.backbone(inputs))
        if mode == "tensor":
            return logits
        if mode == "loss":
            return self._loss(logits, data_samples)
        return self._predict(logits, data_samples)

    def loss_and_predict(self, data: Any) -> tuple[dict[str, torch.Tensor], list[dict[str, Any]]]:
        """The validation loss and predictions from one forward pass
        (``val_cfg=dict(compute_loss=True)`` calls this instead of ``val_step``)."""
        batch = self.data_preprocessor(data, False)
        logits = self(batch["inputs"], mode="tensor")
        samples = batch["data_samples"]
        return self._loss(logits, samples), self._predict(logits, samples)

    @staticmethod
    def _loss(logits: torch.Tensor, data_samples: Any) -> dict[str, torch.Tensor]:
        return {"loss_cls": F.cross_entropy(logits, torch.as_tensor(data_samples))}

    @staticmethod
    def _predict(logits: torch.Tensor, data_samples: Any) -> list[dict[str, Any]]:
        scores = logits.softmax(dim=-1)
        labels = scores.argmax(dim=-1)
        predictions = [{"pred_score": s, "pred_label": int(y)} for s, y in zip(scores, labels)]
        if data_samples is not None:
            for prediction, gt in zip(predictions, data_samples):
                prediction["gt_label"] = int(gt)
        return predictions
