"""build_dataloader: datasets, samplers, batch samplers, collate functions and errors."""

from __future__ import annotations

import functools

import pytest
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, SequentialSampler

from cadence.config import Config
from cadence.dataset import (
    DefaultSampler,
    InfiniteSampler,
    SlicedDataset,
    WorkerSeeder,
    build_dataloader,
)
from cadence.dataset.multigrid import ShortCycleIndex
from cadence.registry import DATA_SAMPLERS, DATASETS, FUNCTIONS, RegistryError


class Squares(Dataset):
    """Sample i is {'x': i * i}; records whether full_init ran."""

    def __init__(self, n: int = 6) -> None:
        self.n = n
        self.initialized = False
        self.metainfo = {"classes": ("a", "b")}

    def full_init(self) -> None:
        self.initialized = True

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> dict:
        return {"x": index * index}


@pytest.fixture(autouse=True)
def _register_dataset():
    DATASETS.register_module(module=Squares)


def cfg(**overrides) -> dict:
    base = dict(
        batch_size=2,
        num_workers=0,
        dataset=dict(type="Squares", n=6),
        sampler=dict(type="DefaultSampler", shuffle=False),
    )
    base.update(overrides)
    return base


def test_builds_dataset_sampler_and_pseudo_collated_batches():
    loader = build_dataloader(cfg(), seed=5)
    assert isinstance(loader, DataLoader)
    assert isinstance(loader.dataset, Squares) and loader.dataset.initialized
    assert isinstance(loader.sampler, DefaultSampler) and loader.sampler.seed == 5
    assert list(loader) == [{"x": [0, 1]}, {"x": [4, 9]}, {"x": [16, 25]}]
    assert isinstance(loader.worker_init_fn, WorkerSeeder)


def test_a_built_dataloader_is_returned_as_is():
    loader = DataLoader(Squares())
    assert build_dataloader(loader) is loader


def test_objects_pass_through_and_shuffled_order_follows_the_seed():
    dataset = Squares(5)
    loader = build_dataloader(
        cfg(dataset=dataset, sampler=dict(type="DefaultSampler"), batch_size=1), seed=3
    )
    assert loader.dataset is dataset and not dataset.initialized  # full_init only when built
    order = torch.randperm(5, generator=torch.Generator().manual_seed(3)).tolist()
    assert [batch["x"][0] for batch in loader] == [i * i for i in order]
    sampler = SequentialSampler(dataset)
    assert build_dataloader(cfg(dataset=dataset, sampler=sampler)).sampler is sampler


def test_without_seed_there_is_no_worker_init_fn():
    loader = build_dataloader(cfg())
    assert loader.worker_init_fn is None


def test_sampler_from_a_dotted_path_gets_data_source_and_no_seed():
    loader = build_dataloader(cfg(sampler=dict(type="torch.utils.data.SequentialSampler")), seed=1)
    assert isinstance(loader.sampler, SequentialSampler)
    assert [b["x"] for b in loader] == [[0, 1], [4, 9], [16, 25]]


def test_batch_sampler_gets_sampler_batch_size_and_drop_last():
    loader = build_dataloader(
        cfg(batch_size=4, drop_last=True, batch_sampler=dict(type="torch.utils.data.BatchSampler"))
    )
    assert isinstance(loader.batch_sampler, BatchSampler)
    assert loader.batch_sampler.batch_size == 4 and loader.batch_sampler.drop_last is True
    assert isinstance(loader.batch_sampler.sampler, DefaultSampler)
    assert list(loader) == [{"x": [0, 1, 4, 9]}]


def test_a_registered_batch_sampler_and_a_missing_sampler_with_a_built_one():
    @DATA_SAMPLERS.register_module()
    class PairSampler:
        def __init__(self, sampler, batch_size):
            self.sampler, self.batch_size = sampler, batch_size

        def __iter__(self):
            return iter([[5, 0], [1, 2]])

        def __len__(self):
            return 2

    loader = build_dataloader(cfg(batch_sampler=dict(type="PairSampler")))
    assert list(loader) == [{"x": [25, 0]}, {"x": [1, 4]}]
    built = BatchSampler(SequentialSampler(range(3)), 3, False)
    no_sampler = {k: v for k, v in cfg(batch_sampler=built).items() if k not in ("sampler",)}
    no_sampler.pop("batch_size")
    assert list(build_dataloader(no_sampler)) == [{"x": [0, 1, 4]}]


def test_batch_option_the_batch_sampler_cannot_take_is_an_error():
    @DATA_SAMPLERS.register_module()
    class FixedBatches:
        def __init__(self, sampler):
            self.sampler = sampler

        def __iter__(self):
            return iter([[0]])

    with pytest.raises(ValueError, match="'dataloader.batch_size=2' cannot be used"):
        build_dataloader(cfg(batch_sampler=dict(type="FixedBatches")))
    with pytest.raises(ValueError, match="'dataloader.drop_last=True' cannot be used"):
        build_dataloader(cfg(batch_size=1, drop_last=True, batch_sampler=dict(type="FixedBatches")))
    loader = build_dataloader(cfg(batch_size=1, batch_sampler=dict(type="FixedBatches")))
    assert list(loader) == [{"x": [0]}]


def add_offset(batch, offset):
    return [sample["x"] + offset for sample in batch]


@pytest.mark.parametrize(
    ("collate_fn", "expected"),
    [
        (dict(type="default_collate"), {"x": torch.tensor([0, 1])}),
        ("default_collate", {"x": torch.tensor([0, 1])}),
        (dict(type="pseudo_collate"), {"x": [0, 1]}),
        (functools.partial(add_offset, offset=1), [1, 2]),
        (dict(type=add_offset, offset=10), [10, 11]),
        (dict(type="AddOffset", offset=100), [100, 101]),
    ],
)
def test_collate_fn_forms(collate_fn, expected):
    FUNCTIONS.register_module("AddOffset", module=add_offset)
    batch = next(iter(build_dataloader(cfg(collate_fn=collate_fn))))
    if isinstance(expected, dict):
        assert type(batch["x"]) is type(expected["x"])
        assert torch.equal(torch.as_tensor(batch["x"]), torch.as_tensor(expected["x"]))
    else:
        assert batch == expected


def test_user_worker_init_fn_is_resolved_with_its_arguments():
    def init(worker_id, base):
        return base + worker_id

    loader = build_dataloader(cfg(worker_init_fn=dict(type=init, base=7)), seed=1)
    assert loader.worker_init_fn(2) == 9
    assert build_dataloader(cfg(worker_init_fn=None), seed=1).worker_init_fn is None


def test_persistent_workers_and_prefetch_are_dropped_without_workers():
    loader = build_dataloader(cfg(persistent_workers=True, prefetch_factor=2, pin_memory=False))
    assert loader.persistent_workers is False and loader.num_workers == 0


def test_num_batch_per_epoch_slices_the_dataset_and_keeps_its_attributes():
    loader = build_dataloader(cfg(num_batch_per_epoch=2))
    assert len(loader.dataset) == 4
    assert loader.dataset.metainfo == {"classes": ("a", "b")}
    assert list(loader) == [{"x": [0, 1]}, {"x": [4, 9]}]


def test_diff_rank_seed_in_one_process_uses_the_given_seed():
    loader = build_dataloader(
        cfg(sampler=dict(type="InfiniteSampler")), seed=8, diff_rank_seed=True
    )
    assert isinstance(loader.sampler, InfiniteSampler) and loader.sampler.seed == 8


def test_errors_name_the_config_key_and_close_names():
    with pytest.raises(KeyError, match="'train_dataloader' needs a 'dataset'"):
        build_dataloader({"sampler": dict(type="DefaultSampler")}, key_path="train_dataloader")
    with pytest.raises(KeyError, match="'val_dataloader' needs a 'sampler'"):
        build_dataloader({"dataset": Squares()}, key_path="val_dataloader")
    with pytest.raises(RegistryError, match="(?s)train_dataloader.sampler.*'DefaultSampler'"):
        build_dataloader(cfg(sampler=dict(type="DefaultSampeler")), key_path="train_dataloader")
    with pytest.raises(RegistryError, match="(?s)dataloader.collate_fn.*'pseudo_collate'"):
        build_dataloader(cfg(collate_fn="psuedo_collate"))
    with pytest.raises(TypeError, match="(?s)'dataloader.batchsize'.*Did you mean 'batch_size'"):
        build_dataloader({**cfg(), "batchsize": 2})
    with pytest.raises(ValueError, match="set shuffle in 'dataloader.sampler'"):
        build_dataloader(cfg(shuffle=True))
    with pytest.raises(KeyError, match="needs a 'type'"):
        build_dataloader(cfg(collate_fn=dict(offset=1)))
    with pytest.raises(TypeError, match="dict or a DataLoader"):
        build_dataloader([1, 2])


def test_errors_from_a_config_file_name_its_key_and_file(tmp_path):
    path = tmp_path / "exp.py"
    path.write_text(
        "train_dataloader = dict(\n"
        "    batch_size=2,\n"
        "    dataset=dict(type='Squares'),\n"
        "    sampler=dict(type='InfiniteSamplr'))\n"
    )
    loaded = Config.fromfile(str(path))
    with pytest.raises(RegistryError) as info:
        build_dataloader(loaded.train_dataloader)
    message = str(info.value)
    assert "train_dataloader.sampler" in message and "exp.py" in message
    assert "Did you mean 'InfiniteSampler'" in message


class Cropped(Squares):
    """Squares whose index may be a short cycle's ``(index, crop_size)``."""

    def __getitem__(self, index):
        i, crop = index if isinstance(index, tuple) else (index, None)
        return {"x": i * i} if crop is None else {"x": i * i, "crop": crop}


class Batched(Cropped):
    """Cropped with batched loading (``__getitems__``); records the indices it gets."""

    def __init__(self, n: int = 6) -> None:
        super().__init__(n)
        self.batches: list[list] = []

    def __getitems__(self, indices: list) -> list:
        self.batches.append(list(indices))
        return [self[i] for i in indices]


def test_a_sliced_dataset_checks_batched_and_tuple_indices_against_the_slice():
    inner = Batched(n=6)
    sliced = SlicedDataset(inner, 4)
    assert sliced[ShortCycleIndex(3, 8)] == {"x": 9, "crop": 8}
    assert sliced[(-1, 8)] == {"x": 9, "crop": 8}  # counted from the slice's end
    with pytest.raises(IndexError, match="out of range for 4 samples"):
        sliced[ShortCycleIndex(4, 8)]
    with pytest.raises(IndexError, match="out of range for 4 samples"):
        sliced.__getitems__([0, 5])  # inside the inner dataset, outside the slice
    assert sliced.__getitems__([ShortCycleIndex(1, 8), -1]) == [{"x": 1, "crop": 8}, {"x": 9}]
    assert inner.batches[-1] == [(1, 8), 3] and type(inner.batches[-1][0]) is ShortCycleIndex
    assert not hasattr(SlicedDataset(Squares(), 4), "__getitems__")  # none to forward


def test_num_batch_per_epoch_works_with_short_cycles():
    DATASETS.register_module(module=Cropped, force=True)
    loader = build_dataloader(
        dict(
            dataset=dict(type="Cropped", n=9), num_batch_per_epoch=3,
            sampler=dict(type="DefaultSampler", shuffle=False),
            batch_sampler=dict(type="ShortCycleBatchSampler", batch_sizes=[1, 2],
                               crop_sizes=[8, 4]),
            collate_fn=dict(type="pseudo_collate"),
        )
    )  # fmt: skip
    assert len(loader.dataset) == 1 + 2 + 1  # three batches, each at its own size
    assert list(loader) == [
        {"x": [0], "crop": [8]}, {"x": [1, 4], "crop": [4, 4]}, {"x": [9], "crop": [8]}
    ]  # fmt: skip
