"""Evaluation: ``BaseMetric``, the ``Evaluator`` that runs metrics, and built-in metrics."""

from .accuracy import Accuracy
from .dump_results import DumpResults
from .evaluator import Evaluator, build_evaluator
from .metric import BaseMetric
from .regression import MAE, MSE, R2
from .utils import get_metric_value

__all__ = [
    "MAE", "MSE", "R2", "Accuracy", "BaseMetric", "DumpResults", "Evaluator", "build_evaluator",
    "get_metric_value",
]  # fmt: skip
