"""NaiveVisualizationHook: each test sample's input, restored to its original picture,
goes with its prediction to the visualizer's add_datasample."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from cadence.hooks import NaiveVisualizationHook
from cadence.structures import BaseDataElement
from cadence.visualization import Visualizer


class Recording(Visualizer):
    def __init__(self) -> None:
        super().__init__(name="naive_vis_test")
        self.drawn: list[tuple[str, np.ndarray, Any, int]] = []

    def add_datasample(self, name, image, data_sample=None, draw_gt=True, draw_pred=True,
                       show=False, wait_time=0, step=0):  # fmt: skip
        self.drawn.append((name, image, data_sample, step))


def test_the_input_is_unnormalised_unpadded_and_resized() -> None:
    # a 2x2 picture (BGR to_bgr) normalised with mean 10 and std 2, padded to 3x4
    pixels = torch.tensor([[10.0, 20.0], [30.0, 40.0]])
    image = torch.zeros(3, 3, 4)
    image[:, :2, :2] = (pixels - 10) / 2
    sample = BaseDataElement(
        metainfo=dict(
            img_norm_cfg=dict(mean=(10,) * 3, std=(2,) * 3, to_bgr=True),
            scale=(2, 2),
            pad_shape=(3, 4, 3),
            ori_height=2,
            ori_width=2,
            img_path="/data/a.jpg",
        )  # fmt: skip
    )
    visualizer = Recording()
    runner = SimpleNamespace(visualizer=visualizer, iter=7)
    prediction = BaseDataElement()
    NaiveVisualizationHook().after_test_iter(
        runner, 0, [dict(inputs=image, data_sample=sample)], [prediction]
    )
    [(name, drawn, data_sample, step)] = visualizer.drawn
    assert (name, step) == ("a.jpg", 7) and data_sample is prediction
    assert drawn.dtype == np.uint8 and drawn.shape == (2, 2, 3)
    assert drawn[..., 0].tolist() == [[10, 20], [30, 40]]


def test_only_every_interval_th_batch_is_drawn() -> None:
    visualizer = Recording()
    runner = SimpleNamespace(visualizer=visualizer, iter=0)
    hook = NaiveVisualizationHook(interval=2)
    batch = dict(inputs=[torch.zeros(3, 4, 4)], data_samples=[BaseDataElement()])
    for batch_idx in range(4):
        hook.after_test_iter(runner, batch_idx, batch, [BaseDataElement()])
    assert len(visualizer.drawn) == 2 and visualizer.drawn[0][1].shape == (4, 4, 3)
    with pytest.raises(ValueError, match="interval"):
        NaiveVisualizationHook(interval=0)
