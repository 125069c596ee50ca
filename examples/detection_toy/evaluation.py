"""The detection_toy metric (IoU), its visualizer and the hook that draws validation samples."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from cadence.evaluator import BaseMetric
from cadence.hooks import Hook
from cadence.registry import HOOKS, METRICS, VISUALIZERS
from cadence.visualization import Visualizer


def box_iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Intersection over union of the boxes ``a[i]`` and ``b[i]`` (N x 4, x1 y1 x2 y2)."""
    lt = torch.maximum(a[:, :2], b[:, :2])
    rb = torch.minimum(a[:, 2:], b[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(dim=1)
    area_a = (a[:, 2:] - a[:, :2]).clamp(min=0).prod(dim=1)
    area_b = (b[:, 2:] - b[:, :2]).clamp(min=0).prod(dim=1)
    return inter / (area_a + area_b - inter).clamp(min=1e-6)


def _boxes(sample: Any, field: str) -> torch.Tensor:
    instances = sample[field] if isinstance(sample, dict) else getattr(sample, field)
    bboxes = instances["bboxes"] if isinstance(instances, dict) else instances.bboxes
    return torch.as_tensor(bboxes, dtype=torch.float32).reshape(-1, 4)


@METRICS.register_module()
class ToyBoxIoU(BaseMetric):
    """``mean_iou``: the mean IoU of predicted and true boxes; ``iou50``: the fraction
    of images whose IoU is at least 0.5. Names carry the prefix ``toy/``."""

    default_prefix = "toy"

    def process(self, data_batch: Any, data_samples: Sequence[Any]) -> None:
        """One IoU per image (its first predicted box against its first true box)."""
        for sample in data_samples:
            pred, gt = _boxes(sample, "pred_instances"), _boxes(sample, "gt_instances")
            self.results.append(float(box_iou(pred[:1], gt[:1])[0]))

    def compute_metrics(self, results: list[Any]) -> dict[str, float]:
        """``mean_iou`` and ``iou50`` over all images."""
        ious = np.asarray(results, dtype=np.float64)
        return {"mean_iou": float(ious.mean()), "iou50": float((ious >= 0.5).mean())}


def to_rgb_image(img: torch.Tensor, scale: int) -> np.ndarray:
    """A (1, H, W) float image (about 0..1) as an (H*scale, W*scale, 3) uint8 RGB array."""
    grey = (img.detach().float().cpu().clamp(0, 1)[0].numpy() * 255).astype(np.uint8)
    grey = grey.repeat(scale, axis=0).repeat(scale, axis=1)
    return np.repeat(grey[:, :, None], 3, axis=2)


@VISUALIZERS.register_module()
class ToyBoxVisualizer(Visualizer):
    """Draws the true box (green) and the predicted box (red) of a sample.

    ``image`` is drawn as given; boxes are multiplied by ``scale`` (the factor the
    image was enlarged by, see :func:`to_rgb_image`), so that lines stay thin.
    """

    def __init__(self, scale: int = 4, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.scale = scale

    def add_datasample(
        self,
        name: str,
        image: Any,
        data_sample: Any = None,
        draw_gt: bool = True,
        draw_pred: bool = True,
        show: bool = False,
        wait_time: float = 0,
        step: int = 0,
    ) -> None:
        """Draw the boxes of ``data_sample`` on ``image``; record it (or show it)."""
        self.set_image(image)
        if data_sample is not None:
            for field, wanted, colour in (("gt_instances", draw_gt, "g"),
                                          ("pred_instances", draw_pred, "r")):  # fmt: skip
                if wanted and field in data_sample:
                    limit = min(self.width, self.height) - 1  # keep the lines on the image
                    boxes = (_boxes(data_sample, field) * self.scale).clamp(0, limit)
                    self.draw_bboxes(boxes, edge_colors=colour, line_widths=2)
        drawn = self.get_image()
        if show:
            self.show(drawn, win_name=name, wait_time=wait_time)
        else:
            self.add_image(name, drawn, step)


@HOOKS.register_module()
class ToyVisualizationHook(Hook):
    """After each validation, draw the first ``max_images`` images of its first batch with
    their true and predicted boxes, through the run's visualizer (``add_datasample``).

    Images are named ``val_img_<img_id>`` and recorded at the current training iteration,
    so the local backend writes ``vis_data/vis_image/val_img_<id>_<iter>.png``.
    """

    priority = "LOW"

    def __init__(self, max_images: int = 4, scale: int = 4) -> None:
        self.max_images = max_images
        self.scale = scale

    def after_val_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Draw the samples of batch 0."""
        if batch_idx != 0 or not outputs:
            return
        for img, sample in list(zip(data_batch["inputs"], outputs))[: self.max_images]:
            runner.visualizer.add_datasample(
                f"val_img_{sample.metainfo.get('img_id', 0)}",
                to_rgb_image(img, self.scale),
                sample,
                step=runner.iter,
            )
