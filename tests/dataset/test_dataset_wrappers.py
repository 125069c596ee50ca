"""ConcatDataset, RepeatDataset, ClassBalancedDataset: indexing, metainfo, lazy init, factors."""

from __future__ import annotations

import numpy as np
import pytest
from torch.utils.data import ConcatDataset as TorchConcatDataset

from cadence.dataset import BaseDataset, ClassBalancedDataset, ConcatDataset, RepeatDataset
from cadence.registry import DATASETS


class Listed(BaseDataset):
    """Samples given in code: ``cats`` is one list of category ids per sample."""

    METAINFO = {"classes": ("a", "b")}

    def __init__(self, cats=((0,), (1,)), name="d", **kwargs):
        self.cats = [list(c) for c in cats]
        self.name = name
        kwargs.setdefault("data_prefix", {})
        super().__init__(**kwargs)

    def load_data_list(self):
        return [{"who": f"{self.name}{i}", "cats": c} for i, c in enumerate(self.cats)]

    def get_cat_ids(self, idx):
        return self.get_data_info(idx)["cats"]


def who(dataset, indices) -> list[str]:
    return [dataset[i]["who"] for i in indices]


def test_wrappers_are_registered():
    for cls in (ConcatDataset, RepeatDataset, ClassBalancedDataset):
        assert DATASETS.get(cls.__name__) is cls


def test_concat_indexes_across_datasets():
    concat = ConcatDataset([Listed(name="a"), Listed(cats=[[0]] * 3, name="b")])
    assert isinstance(concat, TorchConcatDataset)
    assert len(concat) == 5 and concat.cumulative_sizes == [2, 5]
    assert who(concat, [0, 1, 2, 4, -1, -5]) == ["a0", "a1", "b0", "b2", "b2", "a0"]
    assert concat.get_data_info(3)["who"] == "b1"
    assert concat._get_ori_dataset_idx(3) == (1, 1)
    with pytest.raises(ValueError, match="-6"):
        concat[-6]
    with pytest.raises(IndexError):
        concat[5]


def test_concat_builds_configs_and_initialises_lazily():
    DATASETS.register_module(module=Listed)
    concat = ConcatDataset(
        [dict(type="Listed", name="a", lazy_init=True), dict(type="Listed", name="b")],
        lazy_init=True,
    )
    assert not concat._fully_initialized and not concat.datasets[0]._fully_initialized
    assert concat.metainfo == {"classes": ("a", "b")}  # available before full_init
    assert len(concat) == 4  # force_full_init
    assert concat._fully_initialized and concat.datasets[0]._fully_initialized


def test_concat_requires_matching_metainfo():
    first = Listed(metainfo=dict(palette=[1]))
    with pytest.raises(ValueError, match="'palette' is not in the metainfo of dataset 2"):
        ConcatDataset([first, Listed()])
    with pytest.raises(ValueError, match="differs"):
        ConcatDataset([first, Listed(metainfo=dict(palette=[2]))])
    with pytest.raises(TypeError, match="palette"):
        ConcatDataset([first, Listed(metainfo=dict(palette=(1,)))])
    arrays = [Listed(metainfo=dict(mean=np.array([1.0, 2.0]))) for _ in range(2)]
    assert len(ConcatDataset(arrays)) == 4  # arrays compared by value
    mixed = ConcatDataset([first, Listed(metainfo=dict(palette=[2]))], ignore_keys="palette")
    assert mixed.metainfo["palette"] == [1]  # the first dataset's
    with pytest.raises(TypeError, match="ignore_keys"):
        ConcatDataset([first], ignore_keys=("palette",))


def test_repeat_dataset():
    repeat = RepeatDataset(Listed(name="a"), times=3)
    assert len(repeat) == 6
    assert who(repeat, range(6)) == ["a0", "a1"] * 3
    assert repeat.get_data_info(5)["who"] == "a1"
    assert repeat.metainfo == {"classes": ("a", "b")}
    lazy = RepeatDataset(Listed(lazy_init=True), times=2, lazy_init=True)
    assert not lazy._fully_initialized and len(lazy) == 4 and lazy._fully_initialized


def test_class_balanced_repeat_factors():
    # f(0) = 3/5, f(1) = 2/5; with t = 0.5: r(0) = max(1, sqrt(0.5/0.6)) = 1,
    # r(1) = sqrt(0.5/0.4) = 1.118 -> each image with category 1 appears ceil(1.118) = 2 times;
    # an image without categories has factor 1
    cats = [[0], [0], [0, 1], [1], []]
    balanced = ClassBalancedDataset(Listed(cats=cats), oversample_thr=0.5)
    assert balanced.repeat_indices == [0, 1, 2, 2, 3, 3, 4]
    assert len(balanced) == 7
    assert who(balanced, [3, 6]) == ["d2", "d4"]
    assert balanced.get_cat_ids(4) == [1]
    factors = balanced._get_repeat_factors(balanced.dataset, 0.5)
    assert factors == pytest.approx([1.0, 1.0, 1.25**0.5, 1.25**0.5, 1.0])
    # a higher threshold oversamples more: t = 1.0 -> r(0) = sqrt(1/0.6) = 1.29 -> 2
    assert ClassBalancedDataset(Listed(cats=cats), 1.0).repeat_indices == [
        0, 0, 1, 1, 2, 2, 3, 3, 4,
    ]  # fmt: skip


def test_class_balanced_needs_get_cat_ids():
    class NoCats(BaseDataset):
        def load_data_list(self):
            return [{}]

    with pytest.raises(NotImplementedError, match="get_cat_ids"):
        ClassBalancedDataset(NoCats(data_prefix={}), oversample_thr=0.1)


@pytest.mark.parametrize(
    "wrapper",
    [
        lambda d: ConcatDataset([d]),
        lambda d: RepeatDataset(d, times=2),
        lambda d: ClassBalancedDataset(d, oversample_thr=0.1),
    ],
)
def test_wrappers_refuse_subsets(wrapper):
    wrapped = wrapper(Listed())
    with pytest.raises(NotImplementedError, match="subset"):
        wrapped.get_subset(1)
    with pytest.raises(NotImplementedError, match="subset"):
        wrapped.get_subset_(1)


def test_wrappers_reject_what_is_not_a_dataset():
    with pytest.raises(TypeError, match="dataset"):
        RepeatDataset(3, times=2)
    with pytest.raises(TypeError, match="got list"):  # a plain list is data, not a dataset
        RepeatDataset([0], times=2)
