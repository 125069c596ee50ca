"""A pure-PyTorch stand-in for mmcv's compiled extension ``mmcv._ext`` (tests only).

mmcv-lite ships no compiled ops, so ``import mmcv.ops`` fails (each op module loads
``mmcv._ext``), and mmsegmentation and mmdetection import ``mmcv.ops`` at import time.
This module registers a ``mmcv._ext`` whose ``nms`` is a greedy NMS in plain PyTorch (the
one compiled op that the tested configs call, at rtmdet's test time); every other op is a
function that raises, naming the op. Import it (``custom_imports``) before ``mmcv.ops``.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from collections.abc import Callable
from typing import Any

import torch
from torchvision_nms_standin import greedy_nms

NAME = "mmcv._ext"


def _nms(
    boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float, offset: int = 0
) -> torch.Tensor:
    return greedy_nms(boxes, scores, iou_threshold, offset)


def _missing(name: str) -> Callable[..., Any]:
    def op(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"mmcv op '{name}' is not in the test stand-in (needs mmcv)")

    return op


def _getattr(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    return _missing(name)


if NAME not in sys.modules:
    _ext = types.ModuleType(NAME, __doc__)
    # found as a compiled mmcv's would be (mmengine's mmcv_full_available asks for its loader)
    _ext.__spec__ = importlib.machinery.ModuleSpec(NAME, None)
    _ext.nms = _nms  # type: ignore[attr-defined]
    _ext.__getattr__ = _getattr  # type: ignore[method-assign]
    sys.modules[NAME] = _ext
