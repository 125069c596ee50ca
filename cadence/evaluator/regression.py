"""Regression metrics: MSE, MAE and R² over every predicted value of the dataset."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from ..registry import METRICS
from .metric import BaseMetric


def _value(sample: Any, name: str) -> torch.Tensor:
    value = sample.get(name) if isinstance(sample, Mapping) else getattr(sample, name, None)
    if value is None:
        raise KeyError(f"regression metrics need '{name}' in every data sample")
    return torch.as_tensor(value).detach().to("cpu", torch.float64).reshape(-1)


class _RegressionMetric(BaseMetric):
    """Collects ``pred`` and ``target`` (one number, or one tensor, per sample)."""

    def __init__(
        self,
        pred_key: str = "pred",
        target_key: str = "target",
        collect_device: str = "cpu",
        prefix: str | None = None,
    ) -> None:
        super().__init__(collect_device=collect_device, prefix=prefix)
        self.pred_key, self.target_key = pred_key, target_key

    def process(self, data_batch: Any, data_samples: Sequence[Any]) -> None:
        """Append ``(pred, target)`` float64 tensors per sample (shapes must agree)."""
        for sample in data_samples:
            pred, target = _value(sample, self.pred_key), _value(sample, self.target_key)
            if pred.shape != target.shape:
                raise ValueError(
                    f"{type(self).__name__}: '{self.pred_key}' has {pred.numel()} values and "
                    f"'{self.target_key}' {target.numel()} in one sample"
                )
            self.results.append((pred, target))

    def _stacked(self, results: list[Any]) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.cat([p for p, _ in results]), torch.cat([t for _, t in results])


@METRICS.register_module()
class MSE(_RegressionMetric):
    """Mean squared error over every value (``mse``).

    Each data sample holds ``pred`` and ``target`` (names set by ``pred_key`` and
    ``target_key``): numbers or tensors of the same shape. NaN without results.
    """

    default_prefix = "regression"

    def compute_metrics(self, results: list[Any]) -> dict[str, float]:
        if not results:
            return {"mse": math.nan}
        pred, target = self._stacked(results)
        return {"mse": float(((pred - target) ** 2).mean())}


@METRICS.register_module()
class MAE(_RegressionMetric):
    """Mean absolute error over every value (``mae``); samples as for :class:`MSE`."""

    default_prefix = "regression"

    def compute_metrics(self, results: list[Any]) -> dict[str, float]:
        if not results:
            return {"mae": math.nan}
        pred, target = self._stacked(results)
        return {"mae": float((pred - target).abs().mean())}


@METRICS.register_module()
class R2(_RegressionMetric):
    """Coefficient of determination ``1 - SS_res / SS_tot`` over every value (``r2``);
    samples as for :class:`MSE`. NaN when the targets are all equal (``SS_tot = 0``)."""

    default_prefix = "regression"

    def compute_metrics(self, results: list[Any]) -> dict[str, float]:
        if not results:
            return {"r2": math.nan}
        pred, target = self._stacked(results)
        total = float(((target - target.mean()) ** 2).sum())
        if total == 0.0:
            return {"r2": math.nan}
        return {"r2": 1.0 - float(((target - pred) ** 2).sum()) / total}
