"""Visualization: the Visualizer and its recording backends."""

from .vis_backend import BaseVisBackend, LocalVisBackend, to_json_value
from .visualizer import Visualizer

__all__ = ["BaseVisBackend", "LocalVisBackend", "Visualizer", "to_json_value"]
