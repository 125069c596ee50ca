"""Every public name of mmengine.dataset (v0.10.7) exists in cadence.dataset."""

from __future__ import annotations

import numpy as np

import cadence.dataset as dataset
from cadence.registry import FUNCTIONS

MMENGINE_DATASET_ALL = (
    "BaseDataset", "Compose", "force_full_init", "ClassBalancedDataset", "ConcatDataset",
    "RepeatDataset", "DefaultSampler", "InfiniteSampler", "default_worker_init_fn",
    "pseudo_collate", "COLLATE_FUNCTIONS", "default_collate",
)  # fmt: skip


def test_every_mmengine_dataset_name_is_exported():
    missing = [name for name in MMENGINE_DATASET_ALL if name not in dataset.__all__]
    assert missing == []


def test_collate_functions_is_the_functions_registry():
    assert dataset.COLLATE_FUNCTIONS is FUNCTIONS
    assert dataset.COLLATE_FUNCTIONS.get("pseudo_collate") is dataset.pseudo_collate


def test_default_worker_init_fn_seeds_like_worker_init_fn():
    dataset.default_worker_init_fn(1, num_workers=2, rank=0, seed=5)
    first = np.random.rand()
    dataset.worker_init_fn(1, num_workers=2, rank=0, seed=5)
    assert np.random.rand() == first
    dataset.default_worker_init_fn(2, num_workers=2, rank=0, seed=5)
    assert np.random.rand() != first  # another worker, another stream
