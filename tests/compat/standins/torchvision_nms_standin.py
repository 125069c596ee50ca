"""A pure-PyTorch stand-in for torchvision's compiled ``torchvision::nms`` (tests only).

The torchvision wheel on the package index is built for CUDA torch: its compiled ops do
not load with the CPU torch of this environment, and ``import torchvision`` then fails
while registering a fake kernel for ``torchvision::nms``. Defining the operator here
first (greedy NMS in plain PyTorch) lets torchvision's Python part import; mmpretrain
needs only ``torchvision.transforms``. Import this module before torchvision.
"""

from __future__ import annotations

import torch


def greedy_nms(
    dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float, offset: int = 0
) -> torch.Tensor:
    """Indices of the boxes kept, best score first (``offset`` 1: mmcv's legacy box size)."""
    order = scores.argsort(descending=True)
    keep: list[int] = []
    x1, y1, x2, y2 = dets.unbind(1)
    areas = (x2 - x1 + offset) * (y2 - y1 + offset)
    while order.numel():
        best = int(order[0])
        keep.append(best)
        rest = order[1:]
        w = torch.minimum(x2[best], x2[rest]) - torch.maximum(x1[best], x1[rest]) + offset
        h = torch.minimum(y2[best], y2[rest]) - torch.maximum(y1[best], y1[rest]) + offset
        w, h = w.clamp(min=0), h.clamp(min=0)
        inter = w * h
        iou = inter / (areas[best] + areas[rest] - inter)
        order = rest[iou <= iou_threshold]
    return torch.tensor(keep, dtype=torch.int64, device=dets.device)


def _nms(dets: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    return greedy_nms(dets, scores, iou_threshold)


_SCHEMA = "(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"

# torchvision registers fake kernels for both; qnms (quantized boxes) is never called here.
for _name in ("nms", "qnms"):
    if not hasattr(torch.ops.torchvision, _name):
        torch.library.define(f"torchvision::{_name}", _SCHEMA)
        torch.library.impl(f"torchvision::{_name}", "default")(_nms)
