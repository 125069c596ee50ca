"""Draw test predictions on their input images with the runner's visualizer."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch.nn import functional as F

from ..registry import HOOKS
from .hook import DATA_BATCH, Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def _samples(data_batch: Any) -> Iterator[tuple[torch.Tensor, Any]]:
    """(input image, data sample) pairs of a batch: a list of per-sample dicts
    (``inputs``, ``data_sample``), or one dict of ``inputs`` and ``data_samples``."""
    if isinstance(data_batch, dict):
        yield from zip(data_batch["inputs"], data_batch["data_samples"])
        return
    for item in data_batch:
        yield item["inputs"], item.get("data_sample", item.get("data_samples"))


def _meta(sample: Any, key: str, default: Any = None) -> Any:
    getter = getattr(sample, "get", None)
    return getter(key, default) if getter is not None else default


def restore_image(image: torch.Tensor, sample: Any) -> np.ndarray:
    """The input ``image`` (CHW, or 1CHW) as the original HWC uint8 picture: normalisation
    undone (``img_norm_cfg``), padding cut off (``pad_shape``: the image is ``scale``, or the
    original size, at the top left) and resized to ``ori_width`` x ``ori_height``."""
    batch = image if image.ndim == 4 else image[None]
    norm = dict(_meta(sample, "img_norm_cfg", None) or {})
    mean = torch.as_tensor(norm.get("mean", (0.0,) * batch.size(1)), dtype=torch.float32)
    std = torch.as_tensor(norm.get("std", (1.0,) * batch.size(1)), dtype=torch.float32)
    pixels = batch[0].detach().float().cpu() * std[:, None, None] + mean[:, None, None]
    if norm.get("to_bgr", True) and pixels.size(0) == 3:
        pixels = pixels.flip(0)
    ori = (
        int(_meta(sample, "ori_width", pixels.size(2))),
        int(_meta(sample, "ori_height", pixels.size(1))),
    )
    if _meta(sample, "pad_shape") is not None:
        width, height = _meta(sample, "scale", None) or ori
        pixels = pixels[:, : int(height), : int(width)]
    if tuple(pixels.shape[-2:]) != (ori[1], ori[0]):
        pixels = F.interpolate(pixels[None], size=(ori[1], ori[0]), mode="bilinear")[0]
    hwc = pixels.permute(1, 2, 0).clamp(0, 255).round().to(torch.uint8)
    return np.ascontiguousarray(hwc.numpy())


@HOOKS.register_module()
class NaiveVisualizationHook(Hook):
    """Every ``interval`` test batches, give each sample's restored input image and its
    prediction to ``runner.visualizer.add_datasample`` (which draws and records it).

    Args:
        interval: draw every ``interval``-th batch of the test loop.
        draw_gt: ask the visualizer to draw the ground truth.
        draw_pred: ask the visualizer to draw the prediction.
    """

    priority = "NORMAL"

    def __init__(self, interval: int = 1, draw_gt: bool = True, draw_pred: bool = True) -> None:
        if isinstance(interval, bool) or not isinstance(interval, int) or interval < 1:
            raise ValueError(
                f"NaiveVisualizationHook.interval must be an int >= 1, got {interval!r}"
            )
        self._interval = interval
        self.draw_gt = draw_gt
        self.draw_pred = draw_pred

    def before_train(self, runner: RunnerProtocol) -> None:
        """Record the model graph in the visualizer's backends."""
        runner.visualizer.add_graph(runner.model, None)

    def after_test_iter(
        self,
        runner: RunnerProtocol,
        batch_idx: int,
        data_batch: DATA_BATCH = None,
        outputs: Sequence[Any] | None = None,
    ) -> None:
        """Draw the samples of every ``interval``-th test batch."""
        if data_batch is None or outputs is None:
            return
        if not self.every_n_inner_iters(batch_idx, self._interval):
            return
        for (image, sample), output in zip(_samples(data_batch), outputs):
            name = os.path.basename(str(_meta(sample, "img_path", f"{batch_idx}.png")))
            runner.visualizer.add_datasample(
                name,
                restore_image(image, sample),
                output,
                draw_gt=self.draw_gt,
                draw_pred=self.draw_pred,
                step=runner.iter,
            )
