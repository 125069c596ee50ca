"""BaseDataset: annotation file, paths, metainfo merging, indices, serialisation, refetch."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from cadence.dataset import BaseDataset, build_dataloader, force_full_init
from cadence.registry import DATASETS

ENTRIES = [{"img_path": f"{i}.jpg", "label": i} for i in range(5)]


@pytest.fixture
def root(tmp_path):
    """A data root holding ``ann.json`` (5 samples) and ``classes.txt``."""
    annotation = {"metainfo": {"dataset_type": "toy", "task": "from_file"}, "data_list": ENTRIES}
    (tmp_path / "ann.json").write_text(json.dumps(annotation))
    (tmp_path / "classes.txt").write_text("cat\ndog\n")
    return tmp_path


class Toy(BaseDataset):
    METAINFO = {"task": "from_class", "palette": [1, 2]}


def labels(dataset) -> list[int]:
    return [dataset.get_data_info(i)["label"] for i in range(len(dataset))]


def test_paths_are_joined_with_data_root(root):
    dataset = BaseDataset(
        ann_file="ann.json", data_root=str(root), data_prefix=dict(img_path="imgs")
    )
    assert dataset.ann_file == os.path.join(str(root), "ann.json")
    assert dataset.data_prefix == {"img_path": os.path.join(str(root), "imgs")}
    assert dataset.get_data_info(1)["img_path"] == os.path.join(str(root), "imgs", "1.jpg")


def test_absolute_prefix_and_default_prefix(root):
    dataset = BaseDataset(
        ann_file=str(root / "ann.json"), data_root="/elsewhere", data_prefix=dict(img_path="/abs")
    )
    assert dataset.ann_file == str(root / "ann.json")  # absolute: not joined
    assert dataset.get_data_info(0)["img_path"] == "/abs/0.jpg"
    plain = BaseDataset(ann_file=str(root / "ann.json"))  # data_prefix=dict(img_path='')
    assert plain.data_prefix == {"img_path": ""} and plain.get_data_info(0)["img_path"] == "0.jpg"


def test_metainfo_priority_file_then_class_then_argument(root):
    dataset = Toy(
        ann_file="ann.json",
        data_root=str(root),
        metainfo=dict(palette=[9], classes=str(root / "classes.txt")),
    )
    assert dataset.metainfo == {
        "task": "from_class",  # the class beats the file
        "palette": [9],  # the argument beats the class
        "dataset_type": "toy",  # only in the file
        "classes": ["cat", "dog"],  # a file name is read as a list of lines
    }
    dataset.metainfo["palette"].append(0)  # a copy
    assert dataset.metainfo["palette"] == [9]
    assert Toy.METAINFO == {"task": "from_class", "palette": [1, 2]}
    with pytest.raises(TypeError, match="metainfo"):
        Toy(ann_file="ann.json", data_root=str(root), metainfo=[1])


def test_lazy_init_reads_nothing_until_needed(root, capsys):
    dataset = Toy(ann_file="ann.json", data_root=str(root), lazy_init=True)
    assert not dataset._fully_initialized
    assert "dataset_type" not in dataset.metainfo  # the file is not read yet
    assert len(dataset) == 5  # force_full_init
    assert dataset._fully_initialized and dataset.metainfo["dataset_type"] == "toy"
    assert "WARNING - Toy.__len__ called before full_init()" in capsys.readouterr().out


def test_serialized_samples_live_in_one_buffer(root):
    dataset = BaseDataset(ann_file="ann.json", data_root=str(root))
    assert dataset.data_list == []
    assert dataset.data_bytes.dtype == np.uint8 and dataset.data_bytes.ndim == 1
    assert dataset.data_address.tolist() == sorted(dataset.data_address.tolist())
    assert dataset.data_address[-1] == len(dataset.data_bytes)
    info = dataset.get_data_info(-1)
    # data_root joined with the default prefix '' is data_root itself
    assert info == {"img_path": os.path.join(str(root), "4.jpg"), "label": 4, "sample_idx": 4}
    info["label"] = 99  # a fresh copy each time
    assert dataset.get_data_info(4)["label"] == 4
    with pytest.raises(IndexError):
        dataset.get_data_info(5)


def test_unserialized_samples_give_the_same_answers(root):
    dataset = BaseDataset(ann_file=str(root / "ann.json"), serialize_data=False)
    assert len(dataset.data_list) == 5
    assert dataset.get_data_info(-2) == {"img_path": "3.jpg", "label": 3, "sample_idx": 3}
    dataset.get_data_info(0)["label"] = 99
    assert dataset.data_list[0]["label"] == 0


@pytest.mark.parametrize("serialize", [True, False])
@pytest.mark.parametrize(
    ("indices", "expected"),
    [
        (3, [0, 1, 2]),
        (-2, [3, 4]),
        ([4, 0, 2], [4, 0, 2]),
        ([-1], [4]),
        (0, []),
        (10, [0, 1, 2, 3, 4]),
    ],
)
def test_indices_and_subsets(root, serialize, indices, expected):
    kwargs = dict(ann_file="ann.json", data_root=str(root), serialize_data=serialize)
    assert labels(BaseDataset(indices=indices, **kwargs)) == expected
    dataset = BaseDataset(**kwargs)
    subset = dataset.get_subset(indices)
    assert labels(subset) == expected and labels(dataset) == [0, 1, 2, 3, 4]
    assert type(subset) is BaseDataset and subset.pipeline is not dataset.pipeline
    dataset.get_subset_(indices)
    assert labels(dataset) == expected


def test_bad_indices(root):
    with pytest.raises(TypeError, match="indices"):
        BaseDataset(ann_file="ann.json", data_root=str(root), indices="3")
    with pytest.raises(IndexError):
        BaseDataset(ann_file="ann.json", data_root=str(root), indices=[5])


def test_filter_data_sees_filter_cfg(root):
    class EvenOnly(BaseDataset):
        def filter_data(self):
            if not self.filter_cfg or not self.filter_cfg.get("even"):
                return self.data_list
            return [d for d in self.data_list if d["label"] % 2 == 0]

    kwargs = dict(ann_file="ann.json", data_root=str(root))
    assert labels(EvenOnly(filter_cfg=dict(even=True), **kwargs)) == [0, 2, 4]
    # filtering comes before indices
    assert labels(EvenOnly(filter_cfg=dict(even=True), indices=2, **kwargs)) == [0, 2]
    assert labels(EvenOnly(**kwargs)) == [0, 1, 2, 3, 4]


def test_parse_data_info_may_return_several_samples(root):
    class TwoFrames(BaseDataset):
        def parse_data_info(self, raw):
            return [dict(raw, frame=0), dict(raw, frame=1)]

    dataset = TwoFrames(ann_file="ann.json", data_root=str(root), data_prefix={})
    assert len(dataset) == 10
    assert [dataset.get_data_info(i)["frame"] for i in (2, 3)] == [0, 1]


def test_getitem_runs_the_pipeline_and_refetches_in_training(root):
    def drop_odd(info):
        return None if info["label"] % 2 else {"label": info["label"]}

    kwargs = dict(ann_file="ann.json", data_root=str(root), pipeline=[drop_odd])
    np.random.seed(0)
    train = BaseDataset(**kwargs)
    assert train[0] == {"label": 0}
    assert all(train[1]["label"] % 2 == 0 for _ in range(10))  # replaced by an even sample
    with pytest.raises(RuntimeError, match="test mode"):
        BaseDataset(test_mode=True, **kwargs)[1]
    always_none = BaseDataset(ann_file="ann.json", data_root=str(root), pipeline=[lambda i: None])
    always_none.max_refetch = 3
    with pytest.raises(RuntimeError, match="4 samples"):
        always_none[0]


def test_pipeline_configs_are_built_from_transforms(root):
    from cadence.registry import TRANSFORMS
    from cadence.transforms import BaseTransform

    class KeepLabel(BaseTransform):
        def transform(self, results):
            return {"label": results["label"], "idx": results["sample_idx"]}

    TRANSFORMS.register_module(module=KeepLabel)
    dataset = BaseDataset(
        ann_file="ann.json", data_root=str(root), pipeline=[dict(type="KeepLabel")]
    )
    assert dataset[3] == {"label": 3, "idx": 3}


def test_annotation_file_errors(tmp_path):
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "partial.json").write_text(json.dumps({"data_list": []}))
    (tmp_path / "ok.json").write_text(json.dumps({"metainfo": {}, "data_list": [{"x": 1}]}))
    with pytest.raises(TypeError, match="dict"):
        BaseDataset(ann_file=str(tmp_path / "list.json"))
    with pytest.raises(ValueError, match="metainfo"):
        BaseDataset(ann_file=str(tmp_path / "partial.json"))
    with pytest.raises(KeyError, match="img_path"):  # the default data_prefix names img_path
        BaseDataset(ann_file=str(tmp_path / "ok.json"))
    with pytest.raises(TypeError, match=r"data_prefix\['img_path'\]"):
        BaseDataset(ann_file=str(tmp_path / "ok.json"), data_prefix=dict(img_path=3))
    with pytest.raises(ValueError, match="ann_file") as info:
        BaseDataset()
    assert isinstance(info.value, TypeError)  # mmengine's type there


def test_metainfo_may_be_a_config():
    from cadence.config import Config

    assert BaseDataset(metainfo=Config(dict(classes=["a"])), lazy_init=True).metainfo == {
        "classes": ["a"]
    }


def test_an_empty_data_list_is_an_empty_dataset(tmp_path):
    (tmp_path / "empty.json").write_text(json.dumps({"metainfo": {}, "data_list": []}))
    assert len(BaseDataset(ann_file=str(tmp_path / "empty.json"))) == 0


def test_force_full_init_calls_full_init_once():
    class Lazy:
        _fully_initialized = False
        calls = 0

        def full_init(self):
            self.calls += 1

        @force_full_init
        def size(self):
            return 7

    lazy = Lazy()
    assert lazy.size() == 7 and lazy.size() == 7 and lazy.calls == 1

    class NoInit:
        @force_full_init
        def size(self):
            return 7

    with pytest.raises(AttributeError, match="full_init"):
        NoInit().size()


def test_a_registered_dataset_builds_and_loads(root):
    DATASETS.register_module(module=Toy)
    loader = build_dataloader(
        dict(
            batch_size=2,
            dataset=dict(type="Toy", ann_file="ann.json", data_root=str(root), lazy_init=True),
            sampler=dict(type="DefaultSampler", shuffle=False),
        )
    )
    assert loader.dataset._fully_initialized  # the builder calls full_init
    batches = [batch["label"] for batch in loader]  # pseudo_collate: a dict of lists
    assert batches == [[0, 1], [2, 3], [4]]
