"""torch's base classes under the names mmengine's ``parrots_wrapper`` gives them.

mmcv and the OpenMMLab projects import ``_BatchNorm``, ``_InstanceNorm``, ``_ConvNd``,
the pooling bases and ``SyncBatchNorm`` from here (parrots, the alternative backend these
names once switched to, is not supported: they are always torch's).
"""

from __future__ import annotations

import torch
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.conv import _ConvNd, _ConvTransposeMixin
from torch.nn.modules.instancenorm import _InstanceNorm
from torch.nn.modules.pooling import _AdaptiveAvgPoolNd, _AdaptiveMaxPoolNd, _AvgPoolNd, _MaxPoolNd
from torch.utils.data import DataLoader

TORCH_VERSION = torch.__version__
PoolDataLoader = DataLoader
SyncBatchNorm = torch.nn.SyncBatchNorm


def is_rocm_pytorch() -> bool:
    """Whether this torch is built for ROCm."""
    try:
        from torch.utils.cpp_extension import ROCM_HOME
    except ImportError:
        return False
    return torch.version.hip is not None and ROCM_HOME is not None


def _get_cuda_home() -> str | None:
    from torch.utils import cpp_extension

    home = cpp_extension.ROCM_HOME if is_rocm_pytorch() else cpp_extension.CUDA_HOME
    return home


def get_build_config() -> str:
    """torch's build configuration (``torch.__config__.show()``)."""
    return str(torch.__config__.show())


__all__ = [
    "DataLoader", "PoolDataLoader", "SyncBatchNorm", "TORCH_VERSION", "_AdaptiveAvgPoolNd",
    "_AdaptiveMaxPoolNd", "_AvgPoolNd", "_BatchNorm", "_ConvNd", "_ConvTransposeMixin",
    "_InstanceNorm", "_MaxPoolNd", "get_build_config", "is_rocm_pytorch",
]  # fmt: skip
