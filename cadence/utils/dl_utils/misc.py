"""Small torch helpers: norm-layer checks, tensors to images, meshgrid, tracing."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import torch
import torch.nn as nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.instancenorm import _InstanceNorm

#: The installed torch's version string (``torch.__version__``).
TORCH_VERSION: str = str(torch.__version__)

_NORM_TYPES = (_BatchNorm, _InstanceNorm, nn.GroupNorm, nn.LayerNorm)


def is_norm(layer: nn.Module, exclude: type | tuple[type, ...] | None = None) -> bool:
    """Whether ``layer`` is a batch/instance/group/layer norm and not one of ``exclude``."""
    if exclude is not None:
        excluded = exclude if isinstance(exclude, tuple) else (exclude,)
        if not all(isinstance(t, type) for t in excluded):
            raise TypeError(f'"exclude" must be None, a type or a tuple of types, got {exclude!r}')
        if isinstance(layer, excluded):
            return False
    return isinstance(layer, _NORM_TYPES)


def has_batch_norm(model: nn.Module) -> bool:
    """Whether ``model`` is or contains a batch-norm layer."""
    return any(isinstance(m, _BatchNorm) for m in model.modules())


def mmcv_full_available() -> bool:
    """Whether mmcv with its compiled ops (``mmcv._ext``) is installed."""
    try:
        return importlib.util.find_spec("mmcv._ext") is not None
    except (ImportError, ValueError):
        return False


def tensor2imgs(
    tensor: torch.Tensor,
    mean: tuple[float, ...] | None = None,
    std: tuple[float, ...] | None = None,
    to_bgr: bool = True,
) -> list[np.ndarray]:
    """Turn an ``(N, C, H, W)`` batch (C is 1 or 3, RGB) into N ``(H, W, C)`` arrays.

    Each image is un-normalised (``x * std + mean``, defaults 0 and 1) and,
    with ``to_bgr`` and 3 channels, reordered to BGR. 1-channel input needs ``to_bgr=False``.
    """
    if not torch.is_tensor(tensor) or tensor.ndim != 4:
        raise ValueError(f"tensor2imgs needs a 4-d tensor (N, C, H, W), got {tensor!r:.60}")
    channels = tensor.size(1)
    if channels not in (1, 3):
        raise ValueError(f"tensor2imgs needs 1 or 3 channels, got {channels}")
    mean = (0.0,) * channels if mean is None else tuple(mean)
    std = (1.0,) * channels if std is None else tuple(std)
    if not len(mean) == len(std) == channels:
        raise ValueError(f"mean and std need {channels} values, got {mean} and {std}")
    if channels == 1 and to_bgr:
        raise ValueError("a 1-channel tensor cannot be converted to BGR; pass to_bgr=False")
    images = tensor.detach().permute(0, 2, 3, 1) * tensor.new_tensor(std) + tensor.new_tensor(mean)
    array = images.cpu().numpy()
    if to_bgr:
        array = array[..., ::-1]
    return [np.ascontiguousarray(img) for img in array]


def torch_meshgrid(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``torch.meshgrid`` with matrix (``'ij'``) indexing, without the indexing warning."""
    return tuple(torch.meshgrid(*tensors, indexing="ij"))


def is_jit_tracing() -> bool:
    """Whether the code runs under ``torch.jit.trace``."""
    return bool(torch.jit.is_tracing())


def load_url(
    url: str, model_dir: str | None = None, map_location: Any = None, **kwargs: Any
) -> Any:
    """Download (once, into the torch hub cache or ``model_dir``) and load a checkpoint URL."""
    return torch.hub.load_state_dict_from_url(url, model_dir=model_dir, map_location=map_location,
                                              **kwargs)  # fmt: skip
