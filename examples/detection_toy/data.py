"""The detection_toy data: an annotation file of boxes, images drawn from it, three transforms.

Every sample is a ``size`` x ``size`` grey image with one bright rectangle on a
noisy background. The annotation file (mmengine's format: ``metainfo`` plus
``data_list``) holds each sample's box and noise seed, and is written on first
use, so no image file is ever stored: :class:`RenderToyImage` draws the image
from its annotation, the way a ``LoadImageFromFile`` step would read it.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import numpy as np
import torch

from cadence.dataset import BaseDataset
from cadence.registry import DATASETS, TRANSFORMS
from cadence.structures import BaseDataElement, InstanceData
from cadence.transforms import BaseTransform

#: The sides of a box are drawn from this range (pixels, both ends included).
BOX_SIDES = (6, 20)


def make_annotations(num_samples: int, size: int, seed: int) -> dict[str, Any]:
    """An annotation dict of ``num_samples`` random boxes inside a ``size`` x ``size`` image."""
    rng = np.random.default_rng(seed)
    data_list = []
    for index in range(num_samples):
        w, h = (int(v) for v in rng.integers(BOX_SIDES[0], BOX_SIDES[1] + 1, size=2))
        x1, y1 = int(rng.integers(0, size - w + 1)), int(rng.integers(0, size - h + 1))
        data_list.append({
            "img_id": index,
            "noise_seed": int(rng.integers(2**31)),
            "img_shape": [size, size],
            "gt_bboxes": [[x1, y1, x1 + w, y1 + h]],  # x1, y1, x2, y2 in pixels
        })  # fmt: skip
    return {"metainfo": {"classes": ["box"], "img_size": size}, "data_list": data_list}


def write_json_atomically(path: str, content: Any) -> None:
    """Write ``content`` as JSON to ``path`` so that readers never see half a file."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(content, f)
    os.replace(tmp, path)


@DATASETS.register_module()
class ToyBoxDataset(BaseDataset):
    """:class:`~cadence.dataset.BaseDataset` over a generated annotation file.

    When ``ann_file`` does not exist yet it is written first, with ``num_samples``
    boxes drawn with ``generate_seed`` (give each split its own seed).

    Args:
        num_samples: how many samples a generated file holds.
        generate_seed: seed of the generated boxes and noise.
        img_size: side of the square images.
        **kwargs: :class:`~cadence.dataset.BaseDataset` arguments (``ann_file``,
            ``data_root``, ``pipeline``, ``test_mode``...).
    """

    METAINFO = {"classes": ("box",)}

    def __init__(
        self, num_samples: int = 256, generate_seed: int = 0, img_size: int = 32, **kwargs: Any
    ) -> None:
        self.num_samples = num_samples
        self.generate_seed = generate_seed
        self.img_size = img_size
        kwargs.setdefault("data_prefix", {})  # entries name no files
        super().__init__(**kwargs)

    def load_data_list(self) -> list[dict]:
        """Write the annotation file if it is missing, then read it as BaseDataset does."""
        if self.ann_file and not os.path.exists(self.ann_file):
            annotations = make_annotations(self.num_samples, self.img_size, self.generate_seed)
            write_json_atomically(self.ann_file, annotations)
        return super().load_data_list()


@TRANSFORMS.register_module()
class RenderToyImage(BaseTransform):
    """Draw ``img`` (float32, H x W, values about 0..1) from the sample's box and noise seed.

    The background is uniform noise up to ``noise``; the box is ``1 - noise`` plus noise.
    """

    def __init__(self, noise: float = 0.35) -> None:
        self.noise = noise

    def transform(self, results: dict[str, Any]) -> dict[str, Any]:
        """Add ``img`` and ``gt_bboxes`` (an N x 4 float32 array) to ``results``."""
        h, w = results["img_shape"]
        rng = np.random.default_rng(results["noise_seed"])
        img = rng.uniform(0.0, self.noise, size=(h, w)).astype(np.float32)
        boxes = np.asarray(results["gt_bboxes"], dtype=np.float32).reshape(-1, 4)
        for x1, y1, x2, y2 in boxes.astype(int):
            img[y1:y2, x1:x2] += 1.0 - self.noise
        results["img"] = img
        results["gt_bboxes"] = boxes
        return results


def flip_boxes(boxes: Any, width: int) -> Any:
    """``boxes`` (..., 4 as x1, y1, x2, y2) mirrored left-right in an image ``width`` wide."""
    flipped = boxes.clone() if isinstance(boxes, torch.Tensor) else boxes.copy()
    flipped[..., 0] = width - boxes[..., 2]
    flipped[..., 2] = width - boxes[..., 0]
    return flipped


@TRANSFORMS.register_module()
class ToyRandomFlip(BaseTransform):
    """Mirror ``img`` and ``gt_bboxes`` left-right with probability ``prob``; set ``flip``.

    ``prob=1.0`` and ``prob=0.0`` are the two views of the flip test-time augmentation.
    """

    def __init__(self, prob: float = 0.5) -> None:
        if not 0.0 <= prob <= 1.0:
            raise ValueError(f"prob must be in [0, 1], got {prob}")
        self.prob = prob

    def transform(self, results: dict[str, Any]) -> dict[str, Any]:
        """``results`` with ``flip`` set, and the image and boxes mirrored when it is True."""
        flip = bool(np.random.rand() < self.prob)
        results["flip"] = flip
        if flip:
            results["img"] = np.ascontiguousarray(results["img"][:, ::-1])
            results["gt_bboxes"] = flip_boxes(results["gt_bboxes"], results["img"].shape[1])
        return results


@TRANSFORMS.register_module()
class PackToyInputs(BaseTransform):
    """``dict(inputs=(1, H, W) tensor, data_samples=BaseDataElement)``, the model's input.

    The data sample holds ``gt_instances`` (an :class:`~cadence.structures.InstanceData`
    with ``bboxes``) and the ``meta_keys`` of the results as metainfo.
    """

    def __init__(self, meta_keys: tuple[str, ...] = ("img_id", "img_shape", "flip")) -> None:
        self.meta_keys = tuple(meta_keys)

    def transform(self, results: dict[str, Any]) -> dict[str, Any]:
        """Pack the image and the boxes; keys other than ``meta_keys`` are dropped."""
        img = torch.as_tensor(np.asarray(results["img"], dtype=np.float32))
        metainfo = {key: results.get(key, False if key == "flip" else None)
                    for key in self.meta_keys}  # fmt: skip
        sample = BaseDataElement(metainfo=metainfo)
        sample.gt_instances = InstanceData(
            bboxes=torch.as_tensor(results["gt_bboxes"], dtype=torch.float32).reshape(-1, 4)
        )
        return {"inputs": img.unsqueeze(0), "data_samples": sample}
