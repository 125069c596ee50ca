"""LabelData's one-hot conversions and PixelData's shape rules (mmengine's docs)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cadence.structures import BaseDataElement, LabelData, PixelData


def test_label_data_is_a_data_element():
    label = LabelData(metainfo=dict(num_classes=3), score=torch.tensor([0.1, 0.9, 0.0]))
    assert isinstance(label, BaseDataElement) and label.keys() == ["score"]


def test_label_to_onehot_and_back():
    onehot = LabelData.label_to_onehot(torch.tensor([1, 3]), num_classes=5)
    assert onehot.tolist() == [0, 1, 0, 1, 0] and onehot.dtype == torch.int64
    assert LabelData.onehot_to_label(onehot).tolist() == [1, 3]
    assert LabelData.label_to_onehot(torch.tensor([], dtype=torch.long), 3).tolist() == [0, 0, 0]
    with pytest.raises(AssertionError):
        LabelData.label_to_onehot(torch.tensor([5]), num_classes=5)
    with pytest.raises(AssertionError):
        LabelData.label_to_onehot([1], num_classes=5)


def test_onehot_to_label_refuses_other_inputs():
    with pytest.raises(ValueError, match="not one-hot"):
        LabelData.onehot_to_label(torch.tensor([0, 2, 1]))
    with pytest.raises(ValueError, match="not one-hot"):
        LabelData.onehot_to_label(torch.tensor([[0, 1]]))
    with pytest.raises(AssertionError):
        LabelData.onehot_to_label(np.array([0, 1]))


def _pixels() -> PixelData:
    return PixelData(
        metainfo=dict(img_id=3),
        image=np.random.randint(0, 255, (4, 20, 40)),
        featmap=torch.randint(0, 255, (10, 20, 40)),
    )


def test_shape_is_height_and_width():
    assert _pixels().shape == (20, 40)
    assert PixelData().shape is None


def test_two_dimensional_values_get_a_channel_dimension():
    pixels = _pixels()
    with pytest.warns(UserWarning):
        pixels.map3 = torch.randint(0, 255, (20, 40))
    assert tuple(pixels.map3.shape) == (1, 20, 40)


def test_values_must_be_arrays_of_two_or_three_dims_and_the_same_size():
    pixels = _pixels()
    with pytest.raises(AssertionError, match="2 or 3"):
        pixels.map2 = torch.randint(0, 255, (1, 3, 20, 40))
    with pytest.raises(AssertionError, match="not consistent"):
        pixels.small = torch.zeros(1, 10, 40)
    with pytest.raises(AssertionError, match="only support"):
        pixels.listed = [[0] * 40] * 20
    assert pixels.keys() == ["image", "featmap"]


def test_slicing_crops_every_field():
    pixels = _pixels()
    crop = pixels[10:20, 20:40]
    assert crop.shape == (10, 20) and crop.image.shape == (4, 10, 20)
    assert crop.metainfo == {"img_id": 3}
    assert torch.equal(crop.featmap, pixels.featmap[:, 10:20, 20:40])
    point = pixels[10, 20]
    assert (
        point.shape == (1, 1) and point.image[:, 0, 0].tolist() == pixels.image[:, 10, 20].tolist()
    )
    assert pixels[-1, :].shape == (1, 40)


def test_slicing_refuses_other_index_forms():
    pixels = _pixels()
    with pytest.raises(TypeError, match="Unsupported type"):
        pixels[0]
    with pytest.raises(AssertionError):
        pixels[0, 0, 0]
    with pytest.raises(TypeError, match="int or slice"):
        pixels[0, [1, 2]]
