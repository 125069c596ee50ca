"""Predictions of the blobs example's MLP on its test split, computed by hand (a plain
forward and a softmax), for tests that check what ``cadence test``/the Predictor return."""

from __future__ import annotations

from typing import Any

import torch


def hand_scores(blobs: Any, model: torch.nn.Module, num_samples: int, noise: float = 3.0
                ) -> tuple[list[int], torch.Tensor]:  # fmt: skip
    """Labels and softmax scores of ``model`` on the first ``num_samples`` test points
    (``blobs``: the example's module; the test split is ``split_seed=2``)."""
    data = blobs.BlobsDataset(num_samples=num_samples, dim=16, num_classes=8, noise=noise,
                              split_seed=2)  # fmt: skip
    model.eval()
    with torch.no_grad():
        scores = torch.softmax(model.head(model.backbone(data.points)), dim=-1)
    return data.labels.tolist(), scores
