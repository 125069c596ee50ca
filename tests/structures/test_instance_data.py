"""InstanceData: one length for every field, indexing and cat (mmengine's docstring cases)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import torch

from cadence.structures import InstanceData


class TmpObject:
    """A custom field type: ``__len__``, ``__getitem__`` and ``cat`` (mmengine's example)."""

    def __init__(self, tmp: list[Any]) -> None:
        self.tmp = tmp

    def __len__(self) -> int:
        return len(self.tmp)

    def __getitem__(self, item: Any) -> TmpObject:
        if isinstance(item, int):
            item = slice(item, None, len(self))
        return TmpObject(self.tmp[item])

    @staticmethod
    def cat(objs: list[TmpObject]) -> TmpObject:
        return TmpObject(list(itertools.chain(*(obj.tmp for obj in objs))))


def _instances() -> InstanceData:
    inst = InstanceData(metainfo=dict(img_shape=(800, 1196, 3), pad_shape=(800, 1216, 3)))
    inst.det_labels = torch.LongTensor([2, 3])
    inst["det_scores"] = torch.Tensor([0.8, 0.7])
    inst.bboxes = torch.tensor([[0.0, 0.0, 1.0, 1.0], [1.0, 1.0, 2.0, 2.0]])
    inst.polygons = TmpObject([[1, 2, 3, 4], [5, 6, 7, 8]])
    inst.names = ["cat", "dog"]
    inst.ids = np.array([10, 11])
    return inst


def test_length_is_the_number_of_instances():
    inst = _instances()
    assert len(inst) == 2 and "img_shape" in inst
    assert len(InstanceData()) == 0 and not InstanceData()


def test_fields_must_have_the_same_length_and_a_len():
    inst = _instances()
    with pytest.raises(AssertionError, match="not consistent"):
        inst.masks = torch.zeros(3, 4, 4)
    with pytest.raises(AssertionError, match="__len__"):
        inst.count = 2
    assert "masks" not in inst and "count" not in inst
    inst.set_metainfo(dict(scale=2.0))  # metainfo has no length rule
    assert inst.scale == 2.0


def test_a_string_reads_the_field():
    inst = _instances()
    assert inst["det_labels"] is inst.det_labels


def test_int_index_keeps_the_dimension_and_checks_the_range():
    inst = _instances()
    first, last = inst[0], inst[-1]
    assert first.det_labels.tolist() == [2] and first.bboxes.shape == (1, 4)
    assert first.names == ["cat"] and first.polygons.tmp == [[1, 2, 3, 4]]
    assert last.names == ["dog"] and last.ids.tolist() == [11]
    assert first.metainfo == inst.metainfo
    with pytest.raises(IndexError, match="out of range"):
        inst[2]
    with pytest.raises(IndexError):
        inst[-3]


def test_bool_tensor_selects_instances_in_every_field_type():
    inst = _instances()
    kept = inst[inst.det_scores > 0.75]
    assert kept.det_labels.tolist() == [2] and kept.det_scores.tolist() == [pytest.approx(0.8)]
    assert kept.polygons.tmp == [[1, 2, 3, 4]] and kept.names == ["cat"]
    assert kept.ids.tolist() == [10] and kept.metainfo == inst.metainfo
    none = inst[inst.det_scores > 1]
    assert len(none) == 0 and none.bboxes.shape == (0, 4)
    assert none.names == [] and none.polygons.tmp == [] and none.ids.shape == (0,)
    with pytest.raises(AssertionError, match="does not match"):
        inst[torch.tensor([True, False, True])]


def test_long_tensor_list_and_array_indices_reorder():
    inst = _instances()
    order = inst[inst.det_scores.sort().indices]
    assert order.det_scores.tolist() == [pytest.approx(0.7), pytest.approx(0.8)]
    assert order.names == ["dog", "cat"] and order.polygons.tmp[0] == [5, 6, 7, 8]
    assert inst[[1, 1, 0]].det_labels.tolist() == [3, 3, 2]
    assert inst[np.array([1], dtype=np.int32)].names == ["dog"]
    assert inst[np.array([False, True])].ids.tolist() == [11]
    tuple_field = InstanceData(tags=("a", "b", "c"), word="xyz")
    picked = tuple_field[torch.tensor([2, 0])]
    assert picked.tags == ("c", "a") and picked.word == "zx"


def test_slice_index():
    inst = _instances()
    part = inst[1:]
    assert part.names == ["dog"] and part.bboxes.shape == (1, 4) and part.ids.tolist() == [11]


def test_unsupported_indices_and_fields():
    inst = _instances()
    with pytest.raises(AssertionError):
        inst[torch.tensor([0.0, 1.0])]
    with pytest.raises(AssertionError):
        inst[torch.tensor([[0, 1]])]
    with pytest.raises(AssertionError):
        inst[1.0]

    class Opaque:
        def __len__(self) -> int:
            return 2

    odd = InstanceData(scores=torch.zeros(2), opaque=Opaque())
    with pytest.raises(ValueError, match="no attribute of `cat`"):
        odd[torch.tensor([True, False])]


def test_cat_joins_every_field_type():
    inst = _instances()
    both = InstanceData.cat([inst, inst])
    assert len(both) == 4 and both.metainfo == inst.metainfo
    assert both.det_labels.tolist() == [2, 3, 2, 3]
    assert both.names == ["cat", "dog", "cat", "dog"] and inst.names == ["cat", "dog"]
    assert both.ids.tolist() == [10, 11, 10, 11] and len(both.polygons.tmp) == 4
    assert InstanceData.cat([inst]) is inst


def test_cat_refuses_other_keys_empty_lists_and_other_types():
    inst = _instances()
    fewer = inst.new(det_labels=torch.zeros(2))
    with pytest.raises(AssertionError, match="different keys"):
        InstanceData.cat([inst, fewer])
    with pytest.raises(AssertionError):
        InstanceData.cat([])
    with pytest.raises(AssertionError):
        InstanceData.cat([inst, dict(inst.items())])


def test_iterating_yields_single_instances():
    inst = InstanceData(scores=torch.tensor([1.0, 2.0, 3.0]))
    assert [each.scores.tolist() for each in inst] == [[1.0], [2.0], [3.0]]


def test_data_samples_pass_through_collate_and_the_data_preprocessor():
    from cadence.dataset import default_collate, pseudo_collate
    from cadence.model import BaseDataPreprocessor

    samples = [dict(inputs=torch.ones(3), data_samples=_instances()) for _ in range(2)]
    for collate in (pseudo_collate, default_collate):
        batch = BaseDataPreprocessor()(collate(samples))
        moved = batch["data_samples"]
        assert isinstance(moved, list) and len(moved) == 2
        assert all(isinstance(each, InstanceData) and len(each) == 2 for each in moved)
        assert moved[0].names == ["cat", "dog"] and moved[0].img_shape == (800, 1196, 3)
