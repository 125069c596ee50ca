"""BaseDataElement: metainfo vs data fields, dict-like and tensor-like methods (mmengine's docs)."""

from __future__ import annotations

import copy
import pickle
import re

import numpy as np
import pytest
import torch

from cadence.structures import BaseDataElement


def _element() -> BaseDataElement:
    return BaseDataElement(
        metainfo=dict(img_id=0, img_shape=(640, 640)),
        bboxes=torch.ones(6, 4),
        scores=torch.zeros(6),
    )


class DetDataSample(BaseDataElement):
    """mmengine's docstring example: typed fields through properties and set_field."""

    @property
    def proposals(self) -> BaseDataElement:
        return self._proposals

    @proposals.setter
    def proposals(self, value: BaseDataElement) -> None:
        self.set_field(value, "_proposals", dtype=BaseDataElement)

    @proposals.deleter
    def proposals(self) -> None:
        del self._proposals


def test_metainfo_and_data_are_separate_groups():
    elem = BaseDataElement()
    elem.set_metainfo(dict(img_id=9, img_shape=(100, 100)))
    elem.scores = torch.tensor([0.5, 0.25])
    assert "img_shape" in elem and "scores" in elem
    assert elem.metainfo_keys() == ["img_id", "img_shape"]
    assert elem.keys() == ["scores"]
    assert elem.all_keys() == ["img_id", "img_shape", "scores"]
    assert elem.img_shape == (100, 100)
    assert elem.metainfo == {"img_id": 9, "img_shape": (100, 100)}
    assert elem.metainfo_values() == [9, (100, 100)]
    assert dict(elem.metainfo_items()) == elem.metainfo
    assert elem.values()[0].tolist() == [0.5, 0.25]
    assert [k for k, _ in elem.all_items()] == ["img_id", "img_shape", "scores"]
    assert len(elem.all_values()) == 3


def test_keyword_arguments_are_data_and_metainfo_is_deep_copied():
    meta = dict(img_shape=[800, 1333])
    elem = BaseDataElement(metainfo=meta, labels=torch.tensor([1]))
    meta["img_shape"].append(3)
    assert elem.img_shape == [800, 1333]
    assert elem.keys() == ["labels"]


def test_a_name_cannot_move_between_groups():
    elem = _element()
    with pytest.raises(AttributeError, match="already a metainfo field"):
        elem.img_id = 3
    with pytest.raises(AttributeError, match="already a data field"):
        elem.set_metainfo(dict(bboxes=1))
    with pytest.raises(AttributeError, match="already a data field"):
        elem.set_field(1, "scores", field_type="metainfo")


def test_changing_metainfo_and_data():
    elem = _element()
    elem.set_metainfo(dict(img_shape=(1280, 1280)))
    elem.bboxes = elem.bboxes * 2
    assert elem.get("img_shape") == (1280, 1280)
    assert elem.get("bboxes").sum().item() == 48
    assert elem.get("missing") is None and elem.get("missing", 5) == 5


def test_delete_and_pop():
    elem = _element()
    del elem.img_shape
    del elem["bboxes"]
    assert "img_shape" not in elem and "bboxes" not in elem
    assert elem.all_keys() == ["img_id", "scores"]
    assert elem.pop("img_shape", None) is None
    assert elem.pop("scores").shape == (6,)
    assert "scores" not in elem and elem.keys() == []
    assert elem.pop("img_id") == 0 and elem.metainfo_keys() == []
    with pytest.raises(KeyError, match="not contained in metainfo or data"):
        elem.pop("img_id")
    with pytest.raises(AssertionError):
        elem.pop("a", 1, 2)
    with pytest.raises(AttributeError):
        del elem.never_set


def test_private_field_sets_cannot_be_replaced_or_deleted():
    elem = _element()
    with pytest.raises(AttributeError, match="private attribute"):
        elem._data_fields = set()
    with pytest.raises(AttributeError, match="private attribute"):
        del elem._metainfo_fields


def test_bad_argument_types_raise_assertion_error():
    elem = BaseDataElement()
    with pytest.raises(AssertionError):
        elem.set_metainfo([("a", 1)])
    with pytest.raises(AssertionError):
        elem.set_data([("a", 1)])
    with pytest.raises(AssertionError):
        elem.set_field(1, "a", field_type="other")
    with pytest.raises(AssertionError):
        elem.set_field(1, "a", dtype=str)
    with pytest.raises(AssertionError):
        elem.update(dict(a=1))


def test_update_copies_both_groups():
    elem = BaseDataElement(metainfo=dict(a=1), x=torch.zeros(1))
    elem.update(BaseDataElement(metainfo=dict(a=2, b=3), y=torch.ones(1)))
    assert elem.metainfo == {"a": 2, "b": 3}
    assert elem.keys() == ["x", "y"]


def test_new_keeps_or_replaces_fields_and_clone_copies_metainfo():
    elem = _element()
    same = elem.new()
    assert type(same) is BaseDataElement and same is not elem
    assert same.metainfo == elem.metainfo and same.bboxes is elem.bboxes
    other = elem.new(metainfo=dict(img_id=1), labels=torch.zeros(2))
    assert other.metainfo == {"img_id": 1} and other.keys() == ["labels"]
    elem.set_metainfo(dict(box=[1, 2]))
    clone = elem.clone()
    clone.box.append(3)
    assert elem.box == [1, 2]
    assert clone.keys() == elem.keys() and torch.equal(clone.bboxes, elem.bboxes)


def test_typed_fields_through_properties():
    sample = DetDataSample()
    proposals = BaseDataElement(bboxes=torch.rand(5, 4))
    sample.proposals = proposals
    assert "proposals" in sample and sample.proposals is proposals
    assert sample.keys() == ["proposals"]
    assert [value for _, value in sample.items()] == [proposals]
    del sample.proposals
    assert "proposals" not in sample and sample.keys() == []
    with pytest.raises(AssertionError):
        sample.proposals = torch.rand(5, 4)
    assert "proposals" not in sample
    sample.set_data(dict(proposals=proposals))
    assert sample.proposals is proposals


def test_tensor_like_methods_convert_data_and_nested_elements():
    inner = BaseDataElement(labels=torch.tensor([1, 2]))
    elem = BaseDataElement(
        metainfo=dict(img_id=0),
        scores=torch.tensor([0.5], requires_grad=True),
        inner=inner,
        name="x",
    )
    half = elem.to(dtype=torch.float16)
    assert half.scores.dtype == torch.float16 and half.inner.labels.dtype == torch.float16
    assert half.name == "x" and half.img_id == 0 and elem.scores.dtype == torch.float32
    detached = elem.detach()
    assert not detached.scores.requires_grad and elem.scores.requires_grad
    assert elem.cpu().scores.device.type == "cpu"
    arrays = elem.numpy()
    assert isinstance(arrays.scores, np.ndarray) and isinstance(arrays.inner.labels, np.ndarray)
    assert arrays.name == "x"
    back = arrays.to_tensor()
    assert isinstance(back.scores, torch.Tensor) and back.inner.labels.tolist() == [1, 2]
    assert elem.to_dict() == {
        "img_id": 0,
        "scores": elem.scores,
        "inner": {"labels": inner.labels},
        "name": "x",
    }


def test_repr_lists_metainfo_then_data_with_nested_elements_indented():
    inner = BaseDataElement(metainfo=dict(a=1), b=2)
    outer = BaseDataElement(metainfo=dict(img_shape=(8, 8)), inner=inner)
    expected = (
        "<BaseDataElement(\n\n    META INFORMATION\n    img_shape: (8, 8)\n\n    DATA FIELDS\n"
        "    inner: <BaseDataElement(\n        \n            META INFORMATION\n            a: 1\n"
        "        \n            DATA FIELDS\n            b: 2\n        ) at ADDR>\n) at ADDR>"
    )
    assert re.sub(r"0x[0-9a-f]+", "ADDR", repr(outer)) == expected


def test_elements_survive_pickle_and_deepcopy():
    elem = _element()
    for copied in (pickle.loads(pickle.dumps(elem)), copy.deepcopy(elem)):
        assert copied.metainfo == elem.metainfo and copied.keys() == ["bboxes", "scores"]
        copied.extra = torch.zeros(1)
        assert "extra" not in elem
