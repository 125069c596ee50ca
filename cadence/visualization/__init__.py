"""Visualization: the Visualizer, its recording backends and the ``cadence plot`` command.

Optional packages (tensorboard, wandb, mlflow, clearml, neptune, dvclive, aim,
matplotlib) are imported only when a backend first writes or a plot is drawn; each
backend's own module is imported when its name is first read or built.
"""

from __future__ import annotations

from ..utils.lazy import lazy_exports

#: name -> the module that defines it, imported when the name is first read.
LAZY_EXPORTS: dict[str, str] = {
    "encode_png": ".image",
    "to_rgb_uint8": ".image",
    "write_png": ".image",
    "MLflowVisBackend": ".mlflow_backend",
    "TensorboardVisBackend": ".tensorboard_backend",
    "AimVisBackend": ".tracker_backends",
    "ClearMLVisBackend": ".tracker_backends",
    "DVCLiveVisBackend": ".tracker_backends",
    "NeptuneVisBackend": ".tracker_backends",
    "BaseVisBackend": ".vis_backend",
    "LocalVisBackend": ".vis_backend",
    "to_json_value": ".vis_backend",
    "Visualizer": ".visualizer",
    "WandbVisBackend": ".wandb_backend",
}

__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
