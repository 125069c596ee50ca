"""Evaluation: ``BaseMetric``, the ``Evaluator`` that runs metrics, and built-in metrics."""

from .accuracy import Accuracy
from .evaluator import Evaluator, build_evaluator
from .metric import BaseMetric

__all__ = ["Accuracy", "BaseMetric", "Evaluator", "build_evaluator"]
