"""Inference: run a trained model from its config and checkpoint (``Predictor``)."""

from .predictor import Predictor

__all__ = ["Predictor"]
