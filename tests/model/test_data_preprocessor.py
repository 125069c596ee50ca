"""Data preprocessors: device moves keep structure; image maths checked against plain torch."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import pytest
import torch

from cadence.model import BaseDataPreprocessor, ImgDataPreprocessor, stack_batch
from cadence.registry import MODELS

Pair = namedtuple("Pair", ["image", "label"])


class Sample:
    """An object with ``.to`` (like a data element) that records how it was moved."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def to(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self


def test_cast_data_moves_tensors_and_keeps_structure():
    preprocessor = BaseDataPreprocessor().to("meta")
    assert preprocessor.device == torch.device("meta")
    sample = Sample()
    data = {
        "inputs": [torch.ones(2), (torch.zeros(1), "text")],
        "pair": Pair(torch.ones(1), 3),
        "ordered": OrderedDict(a=torch.ones(1)),
        "meta": {"name": b"raw", "none": None, "sample": sample},
    }
    out = preprocessor(data)
    assert type(out) is dict and list(out) == list(data)
    assert type(out["inputs"]) is list and type(out["inputs"][1]) is tuple
    assert out["inputs"][0].device.type == "meta" and out["inputs"][1][0].device.type == "meta"
    assert out["inputs"][1][1] == "text"
    assert type(out["pair"]) is Pair and out["pair"].image.device.type == "meta"
    assert out["pair"].label == 3
    assert type(out["ordered"]) is OrderedDict and out["ordered"]["a"].device.type == "meta"
    assert out["meta"]["name"] == b"raw" and out["meta"]["none"] is None
    assert sample.calls == [((torch.device("meta"),), {})]
    assert data["inputs"][0].device.type == "cpu"  # input left untouched


def test_host_batches_pass_through_and_follow_device_changes():
    preprocessor = BaseDataPreprocessor()
    inputs, labels = torch.ones(2, 3), torch.tensor([0, 1])
    out = preprocessor({"inputs": inputs, "data_samples": labels})
    assert out["inputs"] is inputs and out["data_samples"] is labels  # already there
    assert preprocessor.cast_data(inputs) is inputs
    preprocessor.to("meta")
    assert preprocessor({"inputs": inputs})["inputs"].device.type == "meta"
    assert preprocessor.cast_data(inputs).device.type == "meta"
    preprocessor.cpu()
    assert preprocessor({"inputs": inputs})["inputs"] is inputs


def test_a_host_batch_is_a_new_dict_and_any_other_entry_is_still_moved():
    """A dict of host tensors comes back as a new dict of the same tensors; one entry that
    is not a plain host tensor sends every entry through its own move."""
    preprocessor = BaseDataPreprocessor()
    batch = {"inputs": torch.ones(2), "data_samples": torch.tensor([1])}
    out = preprocessor(batch)
    assert out is not batch and list(out) == list(batch)
    assert all(out[key] is batch[key] for key in batch)
    out["inputs"] = None  # a preprocessor subclass may edit what it returns
    assert batch["inputs"] is not None
    assert preprocessor({}) == {}
    sample = Sample()
    mixed = {"inputs": torch.ones(1), "sample": sample, "nested": [torch.ones(1)]}
    out = preprocessor(mixed)
    assert sample.calls == [((torch.device("cpu"),), {})]
    assert type(out["nested"]) is list and out["nested"][0] is mixed["nested"][0]


def test_non_blocking_reaches_objects_with_to():
    sample = Sample()
    BaseDataPreprocessor(non_blocking=True).cast_data([sample])
    assert sample.calls == [((torch.device("cpu"),), {"non_blocking": True})]


def test_cpu_resets_the_device():
    preprocessor = BaseDataPreprocessor().to("meta")
    assert preprocessor.cpu() is preprocessor
    assert preprocessor.device == torch.device("cpu")
    assert preprocessor.to(device=torch.device("meta")).device == torch.device("meta")


def expected_image(image, mean, std, flip):
    image = image.flip(0) if flip else image
    return (image.float() - torch.tensor(mean).view(-1, 1, 1)) / torch.tensor(std).view(-1, 1, 1)


def test_image_list_is_flipped_normalised_and_padded():
    generator = torch.Generator().manual_seed(0)
    first = torch.randint(0, 256, (3, 2, 3), dtype=torch.uint8, generator=generator)
    second = torch.randint(0, 256, (3, 3, 2), dtype=torch.uint8, generator=generator)
    mean, std = [10.0, 20.0, 30.0], [2.0, 4.0, 8.0]
    preprocessor = ImgDataPreprocessor(
        mean=mean, std=std, bgr_to_rgb=True, pad_size_divisor=4, pad_value=-1
    )
    out = preprocessor({"inputs": [first, second], "data_samples": ["a", "b"]})
    # max H = 3, max W = 3, rounded up to 4: padding goes right and bottom
    expected = torch.full((2, 3, 4, 4), -1.0)
    expected[0, :, :2, :3] = expected_image(first, mean, std, flip=True)
    expected[1, :, :3, :2] = expected_image(second, mean, std, flip=True)
    assert out["inputs"].dtype == torch.float32
    assert torch.allclose(out["inputs"], expected)
    assert out["data_samples"] == ["a", "b"]
    # spot check one pixel by hand: channel 0 of the output is input channel 2
    assert out["inputs"][0, 0, 1, 2].item() == pytest.approx((first[2, 1, 2].item() - 10) / 2)


def test_image_batch_tensor_path():
    batch = torch.arange(2 * 3 * 5 * 6, dtype=torch.float32).view(2, 3, 5, 6)
    preprocessor = ImgDataPreprocessor(mean=[1.0], std=[2.0], pad_size_divisor=4, pad_value=7)
    out = preprocessor({"inputs": batch})
    expected = torch.full((2, 3, 8, 8), 7.0)
    expected[:, :, :5, :6] = (batch - 1.0) / 2.0
    assert torch.equal(out["inputs"], expected)
    assert out["data_samples"] is None


def test_without_normalisation_only_converts_and_stacks():
    images = [torch.ones(1, 2, 2, dtype=torch.uint8), torch.zeros(1, 2, 2, dtype=torch.uint8)]
    out = ImgDataPreprocessor()({"inputs": images})
    assert torch.equal(out["inputs"], torch.stack(images).float())


def test_image_preprocessor_errors():
    with pytest.raises(ValueError, match="both mean and std"):
        ImgDataPreprocessor(mean=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="1 value .* or 3"):
        ImgDataPreprocessor(mean=[1.0, 2.0], std=[1.0, 1.0])
    with pytest.raises(ValueError, match="at most one"):
        ImgDataPreprocessor(bgr_to_rgb=True, rgb_to_bgr=True)
    preprocessor = ImgDataPreprocessor(mean=[1.0, 2.0, 3.0], std=[1.0, 1.0, 1.0])
    with pytest.raises(TypeError, match=r"dict\(inputs=...,"):
        preprocessor([torch.ones(3, 2, 2)])
    with pytest.raises(ValueError, match=r"\(N, C, H, W\)"):
        preprocessor({"inputs": torch.ones(3, 2, 2)})
    with pytest.raises(ValueError, match="3 channels"):
        preprocessor({"inputs": [torch.ones(1, 2, 2)]})
    with pytest.raises(ValueError, match="3-channel"):
        ImgDataPreprocessor(bgr_to_rgb=True)({"inputs": torch.ones(1, 1, 2, 2)})
    with pytest.raises(TypeError, match="non-empty list"):
        preprocessor({"inputs": []})


def test_stack_batch_pads_every_dim_but_the_first():
    out = stack_batch([torch.ones(2, 3), torch.ones(2, 1)], pad_size_divisor=2, pad_value=5)
    assert out.tolist() == [
        [[1, 1, 1, 5], [1, 1, 1, 5]],
        [[1, 5, 5, 5], [1, 5, 5, 5]],
    ]
    with pytest.raises(ValueError, match="one rank"):
        stack_batch([torch.ones(2), torch.ones(2, 2)])


def test_preprocessors_are_registered():
    assert isinstance(MODELS.build(dict(type="BaseDataPreprocessor")), BaseDataPreprocessor)
    built = MODELS.build(dict(type="ImgDataPreprocessor", mean=[0, 0, 0], std=[1, 1, 1]))
    assert built.mean.dtype == torch.float32 and built.mean.shape == (3, 1, 1)
    assert "mean" not in built.state_dict()  # non-persistent, like mmengine


def test_argument_errors_are_also_assertion_errors_with_mmengines_phrases() -> None:
    from cadence.model import ImgDataPreprocessor

    cases = [
        (dict(mean=(1, 2), std=(1, 2, 3)), "`mean` should have"),
        (dict(mean=(1, 2, 3), std=(1, 2)), "`std` should have"),
        (dict(bgr_to_rgb=True, rgb_to_bgr=True), "`bgr2rgb` and `rgb2bgr`"),
        (dict(mean=(1, 2, 3)), "mean and std should be both None"),
    ]
    for kwargs, phrase in cases:
        with pytest.raises(AssertionError, match=phrase):
            ImgDataPreprocessor(**kwargs)
    rgb = ImgDataPreprocessor(mean=(127.5,) * 3, std=(127.5,) * 3)
    with pytest.raises(ValueError, match="If the mean has 3 values"):
        rgb(dict(inputs=[torch.ones(10, 10)]))  # a gray (H, W) image
