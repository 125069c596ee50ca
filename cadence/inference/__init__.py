"""Inference: run a trained model from its config and checkpoint (``Predictor``), and
mmengine's ``BaseInferencer`` for the OpenMMLab projects' inferencers."""

from .base_inferencer import BaseInferencer
from .predictor import Predictor

__all__ = ["BaseInferencer", "Predictor"]
