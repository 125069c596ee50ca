"""The detection_toy models: a box regressor and its flip test-time augmentation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from cadence.model import BaseModel, BaseTTAModel
from cadence.registry import MODELS
from cadence.structures import BaseDataElement, InstanceData

from .data import flip_boxes


@MODELS.register_module()
class ToyBoxRegressor(BaseModel):
    """A small CNN that regresses the one box of a ``img_size`` x ``img_size`` image.

    It predicts ``x1, y1, x2, y2`` as fractions of the image side (a sigmoid) and is
    trained with the smooth L1 loss on those fractions. In ``'predict'`` mode it
    returns the data samples with ``pred_instances.bboxes`` (pixels) added.
    """

    def __init__(self, channels: int = 8, img_size: int = 32,
                 data_preprocessor: Any = None, init_cfg: Any = None) -> None:  # fmt: skip
        super().__init__(data_preprocessor=data_preprocessor, init_cfg=init_cfg)
        c = channels

        def block(cin: int, cout: int) -> list[nn.Module]:
            return [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]

        side = img_size // 8
        self.img_size = img_size
        self.backbone = nn.Sequential(*block(1, c), *block(c, 2 * c), *block(2 * c, 2 * c))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(2 * c * side * side, 64), nn.ReLU(),
                                  nn.Linear(64, 4))  # fmt: skip

    def forward(
        self, inputs: torch.Tensor, data_samples: Sequence[Any] | None = None, mode: str = "tensor"
    ) -> Any:
        boxes = torch.sigmoid(self.head(self.backbone(inputs)))  # fractions of the side
        if mode == "tensor":
            return boxes
        if mode == "loss":
            assert data_samples is not None, "training needs data samples with gt_instances"
            target = torch.cat([s.gt_instances.bboxes for s in data_samples]) / self.img_size
            return {"loss_bbox": F.smooth_l1_loss(boxes, target.to(boxes), beta=0.05)}
        samples = list(data_samples) if data_samples is not None else [
            BaseDataElement() for _ in range(len(boxes))
        ]  # fmt: skip
        boxes = torch.cat([torch.minimum(boxes[:, :2], boxes[:, 2:]),
                           torch.maximum(boxes[:, :2], boxes[:, 2:])], dim=1)  # fmt: skip
        for sample, box in zip(samples, boxes):
            sample.pred_instances = InstanceData(bboxes=(box * self.img_size).unsqueeze(0))
        return samples


@MODELS.register_module()
class ToyFlipTTAModel(BaseTTAModel):
    """Average the boxes predicted on the flipped and the plain views of each image.

    The boxes of a flipped view (its metainfo ``flip``) are mirrored back first. The
    merged sample is the first view's, unflipped, with ``pred_instances.bboxes`` the
    mean and ``pred_instances.view_bboxes`` (1 x views x 4) every view's own boxes;
    its metainfo ``tta_views`` says how many views were merged.
    """

    def merge_preds(self, data_samples_list: list[Sequence[Any]]) -> list[Any]:
        """One merged sample per image; see the class docstring."""
        return [self._merge(views) for views in data_samples_list]

    @staticmethod
    def _merge(views: Sequence[Any]) -> Any:
        unflipped = [_unflipped(view) for view in views]
        stacked = torch.stack([view.pred_instances.bboxes for view in unflipped], dim=1)
        merged = unflipped[0]
        merged.pred_instances = InstanceData(bboxes=stacked.mean(dim=1), view_bboxes=stacked)
        merged.set_metainfo({"tta_views": len(views)})
        return merged


def _unflipped(sample: Any) -> Any:
    """A copy of ``sample`` with its gt and predicted boxes mirrored back if it was flipped."""
    sample = sample.clone()
    if sample.metainfo.get("flip"):
        width = sample.metainfo["img_shape"][1]
        for field in ("gt_instances", "pred_instances"):
            if field in sample:
                instances = getattr(sample, field)
                instances.bboxes = flip_boxes(instances.bboxes, width)
        sample.set_metainfo({"flip": False})
    return sample
