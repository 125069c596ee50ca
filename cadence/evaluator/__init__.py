"""Evaluation: ``BaseMetric``, the ``Evaluator`` that runs metrics, and built-in metrics."""

from .accuracy import Accuracy
from .dump_results import DumpResults
from .evaluator import Evaluator, build_evaluator
from .metric import BaseMetric

__all__ = ["Accuracy", "BaseMetric", "DumpResults", "Evaluator", "build_evaluator"]
