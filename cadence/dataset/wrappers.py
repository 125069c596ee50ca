"""Dataset wrappers: ``ConcatDataset``, ``RepeatDataset``, ``ClassBalancedDataset``.

Each takes datasets or their configs (built from ``DATASETS``), initialises them
lazily like ``BaseDataset`` (``lazy_init``, ``full_init``), and has the first
wrapped dataset's ``metainfo``. Subsets of a wrapper are ambiguous, so
``get_subset``/``get_subset_`` raise: take the subset of the wrapped dataset.
"""

from __future__ import annotations

import bisect
import copy
import logging
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from torch.utils.data import ConcatDataset as _TorchConcatDataset

from ..logging import print_log
from ..registry import DATASETS
from .base_dataset import force_full_init


def _build(dataset: Any) -> Any:
    """``dataset`` itself, or the dataset its config dict builds."""
    if isinstance(dataset, Mapping):
        return DATASETS.build(dataset)
    plain = isinstance(dataset, list | tuple | str)  # sequences, not datasets
    if plain or not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
        raise TypeError(
            f"a wrapped dataset must be a dataset or its config dict, got {type(dataset).__name__}"
        )
    return dataset


def _full_init(dataset: Any) -> None:
    init = getattr(dataset, "full_init", None)
    if callable(init):
        init()


def _warn_lazy(wrapper: Any) -> None:
    print_log(
        f"call {type(wrapper).__name__}.full_init() before using it, so that DataLoader "
        "workers share its annotations",
        logger="current",
        level=logging.WARNING,
    )


def _same(first: Any, other: Any) -> bool:
    if isinstance(first, np.ndarray):
        return bool(np.array_equal(first, other))
    return bool(first == other)


class _NoSubset:
    """``get_subset``/``get_subset_`` refuse: a subset of a wrapper is ambiguous."""

    def get_subset_(self, indices: int | Sequence[int]) -> None:
        """Not supported: take the subset of the wrapped dataset instead."""
        raise NotImplementedError(
            f"{type(self).__name__} has no get_subset/get_subset_ (a subset of a wrapper "
            "is ambiguous); take the subset of the wrapped dataset (its `indices`) instead"
        )

    def get_subset(self, indices: int | Sequence[int]) -> Any:
        """Not supported: take the subset of the wrapped dataset instead."""
        self.get_subset_(indices)


@DATASETS.register_module()
class ConcatDataset(_NoSubset, _TorchConcatDataset):
    """Datasets one after the other; their ``metainfo`` must agree.

    Args:
        datasets: the datasets or their configs.
        lazy_init: do not initialise the datasets until needed.
        ignore_keys: metainfo keys that may differ between the datasets.
    """

    def __init__(
        self,
        datasets: Sequence[Any],
        lazy_init: bool = False,
        ignore_keys: str | list[str] | None = None,
    ) -> None:
        self.datasets: list[Any] = [_build(d) for d in datasets]
        if not self.datasets:
            raise ValueError("ConcatDataset needs at least one dataset")
        if ignore_keys is None:
            self.ignore_keys: list[str] = []
        elif isinstance(ignore_keys, str):
            self.ignore_keys = [ignore_keys]
        elif isinstance(ignore_keys, list):
            self.ignore_keys = ignore_keys
        else:
            raise TypeError(f"ignore_keys must be a str or a list, got {type(ignore_keys)}")
        self._metainfo = self._check_metainfo()
        self._fully_initialized = False
        if not lazy_init:
            self.full_init()

    def _check_metainfo(self) -> dict:
        """The first dataset's metainfo, after checking that the others' agree."""
        infos = [getattr(d, "metainfo", {}) for d in self.datasets]
        keys = set().union(*infos) - set(self.ignore_keys)
        first = infos[0]
        for number, info in enumerate(infos, 1):
            for key in sorted(keys, key=str):
                if key not in info:
                    raise ValueError(f"'{key}' is not in the metainfo of dataset {number}")
                if type(info[key]) is not type(first[key]):
                    raise TypeError(
                        f"metainfo '{key}' of dataset {number} is a {type(info[key]).__name__}, "
                        f"of the first dataset a {type(first[key]).__name__}"
                    )
                if not _same(first[key], info[key]):
                    raise ValueError(
                        f"metainfo '{key}' of dataset {number} differs from the first "
                        "dataset's (pass ignore_keys=... to allow it)"
                    )
        return first

    @property
    def metainfo(self) -> dict:
        """A copy of the first dataset's meta information."""
        return copy.deepcopy(self._metainfo)

    def full_init(self) -> None:
        """Initialise every dataset and compute the cumulative sizes."""
        if self._fully_initialized:
            return
        for dataset in self.datasets:
            _full_init(dataset)
        super().__init__(self.datasets)
        self._fully_initialized = True

    @force_full_init
    def _get_ori_dataset_idx(self, idx: int) -> tuple[int, int]:
        """``(dataset index, index inside it)`` of global index ``idx``."""
        total = len(self)
        if idx < 0:
            if -idx > total:
                raise ValueError(f"index {idx} is out of range for a dataset of length {total}")
            idx += total
        if idx >= total:
            raise IndexError(f"index {idx} is out of range for a dataset of length {total}")
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[dataset_idx - 1] if dataset_idx else 0
        return dataset_idx, idx - start

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        """The annotation of global index ``idx``."""
        dataset_idx, sample_idx = self._get_ori_dataset_idx(idx)
        return self.datasets[dataset_idx].get_data_info(sample_idx)

    @force_full_init
    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, idx: int) -> Any:
        if not self._fully_initialized:
            _warn_lazy(self)
            self.full_init()
        dataset_idx, sample_idx = self._get_ori_dataset_idx(idx)
        return self.datasets[dataset_idx][sample_idx]


class _SingleWrapper(_NoSubset):
    """A wrapper of one dataset whose global indices map to the dataset's."""

    def __init__(self, dataset: Any, lazy_init: bool) -> None:
        self.dataset = _build(dataset)
        self._metainfo = getattr(self.dataset, "metainfo", {})
        self._fully_initialized = False
        if not lazy_init:
            self.full_init()

    @property
    def metainfo(self) -> dict:
        """A copy of the wrapped dataset's meta information."""
        return copy.deepcopy(self._metainfo)

    def full_init(self) -> None:
        raise NotImplementedError

    def _get_ori_dataset_idx(self, idx: int) -> int:
        raise NotImplementedError

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        """The annotation of global index ``idx``."""
        return self.dataset.get_data_info(self._get_ori_dataset_idx(idx))

    def __getitem__(self, idx: int) -> Any:
        if not self._fully_initialized:
            _warn_lazy(self)
            self.full_init()
        return self.dataset[self._get_ori_dataset_idx(idx)]


@DATASETS.register_module()
class RepeatDataset(_SingleWrapper):
    """``dataset`` repeated ``times`` times (one long epoch instead of several short ones)."""

    def __init__(self, dataset: Any, times: int, lazy_init: bool = False) -> None:
        self.times = times
        super().__init__(dataset, lazy_init)

    def full_init(self) -> None:
        """Initialise the wrapped dataset and remember its length."""
        if self._fully_initialized:
            return
        _full_init(self.dataset)
        self._ori_len = len(self.dataset)
        self._fully_initialized = True

    @force_full_init
    def _get_ori_dataset_idx(self, idx: int) -> int:
        return idx % self._ori_len

    @force_full_init
    def __len__(self) -> int:
        return self.times * self._ori_len


@DATASETS.register_module()
class ClassBalancedDataset(_SingleWrapper):
    """Oversample the samples of rare categories (repeat factor sampling, LVIS).

    With ``f(c)`` the fraction of samples containing category ``c``, a sample is
    repeated ``ceil(r)`` times, ``r`` = the largest ``max(1, sqrt(oversample_thr / f(c)))``
    over its categories (1 for a sample without any). The wrapped dataset must
    implement ``get_cat_ids(idx)``.
    """

    def __init__(self, dataset: Any, oversample_thr: float, lazy_init: bool = False) -> None:
        self.oversample_thr = oversample_thr
        super().__init__(dataset, lazy_init)

    def full_init(self) -> None:
        """Initialise the wrapped dataset and compute which indices repeat."""
        if self._fully_initialized:
            return
        _full_init(self.dataset)
        factors = self._get_repeat_factors(self.dataset, self.oversample_thr)
        self.repeat_indices = [
            index for index, factor in enumerate(factors) for _ in range(math.ceil(factor))
        ]
        self._fully_initialized = True

    def _get_repeat_factors(self, dataset: Any, repeat_thr: float) -> list[float]:
        """The repeat factor of each sample of ``dataset``."""
        count = len(dataset)
        cat_ids = [set(dataset.get_cat_ids(i)) for i in range(count)]
        frequency: dict[Any, float] = defaultdict(float)
        for ids in cat_ids:
            for cat in ids:
                frequency[cat] += 1
        repeat = {
            cat: max(1.0, math.sqrt(repeat_thr / (n / count))) for cat, n in frequency.items()
        }
        return [max((repeat[c] for c in ids), default=1.0) for ids in cat_ids]

    @force_full_init
    def _get_ori_dataset_idx(self, idx: int) -> int:
        return self.repeat_indices[idx]

    @force_full_init
    def get_cat_ids(self, idx: int) -> list[int]:
        """The category ids of global index ``idx``."""
        return self.dataset.get_cat_ids(self._get_ori_dataset_idx(idx))

    @force_full_init
    def __len__(self) -> int:
        return len(self.repeat_indices)
