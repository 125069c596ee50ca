"""Visualization: the Visualizer, its recording backends and the ``cadence plot`` command.

Optional packages (tensorboard, wandb, mlflow, clearml, neptune, dvclive, aim,
matplotlib) are imported only when a backend first writes or a plot is drawn.
"""

from .image import encode_png, to_rgb_uint8, write_png
from .mlflow_backend import MLflowVisBackend
from .tensorboard_backend import TensorboardVisBackend
from .tracker_backends import (
    AimVisBackend,
    ClearMLVisBackend,
    DVCLiveVisBackend,
    NeptuneVisBackend,
)
from .vis_backend import BaseVisBackend, LocalVisBackend, to_json_value
from .visualizer import Visualizer
from .wandb_backend import WandbVisBackend

__all__ = [
    "AimVisBackend",
    "BaseVisBackend",
    "ClearMLVisBackend",
    "DVCLiveVisBackend",
    "LocalVisBackend",
    "MLflowVisBackend",
    "NeptuneVisBackend",
    "TensorboardVisBackend",
    "Visualizer",
    "WandbVisBackend",
    "encode_png",
    "to_json_value",
    "to_rgb_uint8",
    "write_png",
]
