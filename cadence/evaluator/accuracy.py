"""Top-k classification accuracy in percent, with mmpretrain's names and conventions."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from ..registry import METRICS
from .metric import BaseMetric


def _field(sample: Any, name: str) -> Any:
    if isinstance(sample, Mapping):
        return sample.get(name)
    return getattr(sample, name, None)


def _labels(values: list[Any], name: str) -> list[int]:
    """Turn ints or one-element tensors/arrays into a list of ints (one host copy per batch)."""
    tensors = [torch.as_tensor(v) for v in values]
    for value in tensors:
        if value.numel() != 1 or value.is_floating_point() or value.is_complex():
            raise ValueError(
                f"Accuracy expects '{name}' to be one integer class index per sample, "
                f"got a {value.dtype} tensor of shape {tuple(value.shape)}"
            )
    return torch.stack([t.reshape(()) for t in tensors]).cpu().tolist()


def _check_thr(thr: Any) -> float | None:
    if thr is None:
        return None
    if isinstance(thr, bool) or not isinstance(thr, numbers.Real):
        raise TypeError(f"Accuracy thresholds must be numbers or None, got {thr!r}")
    return float(thr)


@METRICS.register_module()
class Accuracy(BaseMetric):
    """Top-k accuracy (in percent, 0-100) of single-label classification.

    Each data sample is a dict (or an object with these attributes) holding:

    * ``gt_label``: the true class, an ``int`` or a one-element integer tensor;
    * ``pred_score``: a 1-D tensor of class scores (e.g. softmax probabilities),
      used for every ``k`` in ``topk``; or, when absent,
    * ``pred_label``: the predicted class, an ``int`` or one-element tensor
      (only ``top1`` can be computed then).

    A top-k hit counts only if its score is above the threshold (``> thr``;
    ``None`` means no threshold). Result names are ``top{k}``, and with several
    thresholds ``top{k}_thr-{thr:.2f}`` / ``top{k}_no-thr``, prefixed with
    ``accuracy/`` by default.

    Args:
        topk: an ``int`` or a tuple of them.
        thrs: a threshold, ``None``, or a tuple of them.
        collect_device, prefix: see :class:`BaseMetric`.
    """

    default_prefix = "accuracy"

    def __init__(
        self,
        topk: int | Sequence[int] = (1,),
        thrs: float | None | Sequence[float | None] = 0.0,
        collect_device: str = "cpu",
        prefix: str | None = None,
    ) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        ks = (topk,) if isinstance(topk, int) else tuple(topk)
        if not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
            raise ValueError(f"topk must be a positive int or a tuple of them, got {topk!r}")
        self.topk = ks
        thr_list = thrs if isinstance(thrs, (tuple, list)) else (thrs,)
        self.thrs = tuple(_check_thr(t) for t in thr_list)
        if not self.thrs:
            raise ValueError("thrs must not be empty; use None for no threshold")

    def process(self, data_batch: Any, data_samples: Sequence[Any]) -> None:
        """Append ``{'gt_label': int, 'pred_score': cpu tensor | 'pred_label': int}`` per sample."""
        if not data_samples:
            return
        gts = [_field(s, "gt_label") for s in data_samples]
        if any(gt is None for gt in gts):
            raise KeyError("Accuracy needs 'gt_label' in every data sample")
        gt_labels = _labels(gts, "gt_label")
        scores = [_field(s, "pred_score") for s in data_samples]
        if all(score is not None for score in scores):
            stacked = torch.stack([torch.as_tensor(s).reshape(-1) for s in scores]).detach().cpu()
            rows = [row.clone() for row in stacked]  # own storage: pickles one row, not the batch
            self.results.extend(
                {"pred_score": row, "gt_label": gt} for row, gt in zip(rows, gt_labels)
            )
            return
        preds = [_field(s, "pred_label") for s in data_samples]
        if any(pred is None for pred in preds):
            raise KeyError("Accuracy needs 'pred_score' or 'pred_label' in every data sample")
        self.results.extend(
            {"pred_label": pred, "gt_label": gt}
            for pred, gt in zip(_labels(preds, "pred_label"), gt_labels)
        )

    def _name(self, k: int, thr: float | None) -> str:
        if len(self.thrs) == 1:
            return f"top{k}"
        return f"top{k}_no-thr" if thr is None else f"top{k}_thr-{thr:.2f}"

    def compute_metrics(self, results: list[Any]) -> dict[str, float]:
        """Accuracy in percent for every ``k`` (and threshold); NaN for no results."""
        if not results:
            return {self._name(k, t): math.nan for k in self.topk for t in self.thrs}
        target = torch.tensor([r["gt_label"] for r in results])
        with_scores = ["pred_score" in r for r in results]
        if not all(with_scores):
            if any(with_scores):
                raise ValueError("some samples have 'pred_score' and others only 'pred_label'")
            pred = torch.tensor([r["pred_label"] for r in results])
            return {"top1": (pred == target).double().mean().item() * 100.0}
        scores = torch.stack([r["pred_score"] for r in results])
        max_k = max(self.topk)
        if max_k > scores.shape[1]:
            raise ValueError(
                f"top-{max_k} accuracy needs at least {max_k} classes, but the scores have "
                f"{scores.shape[1]}"
            )
        top_scores, top_labels = scores.topk(max_k, dim=1)
        hits = top_labels == target[:, None]
        metrics: dict[str, float] = {}
        for k in self.topk:
            for thr in self.thrs:
                kept = hits[:, :k] if thr is None else hits[:, :k] & (top_scores[:, :k] > thr)
                correct = kept.any(dim=1).double().sum().item()
                metrics[self._name(k, thr)] = correct * 100.0 / len(results)
        return metrics
