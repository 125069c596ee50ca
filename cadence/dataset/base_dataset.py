"""``BaseDataset``: samples described by an annotation file, run through a pipeline.

The annotation file (OpenMMLab 2.0 format) is ``{"metainfo": {...}, "data_list":
[{...}, ...]}``; each entry of ``data_list`` describes one sample (or several,
see :meth:`BaseDataset.parse_data_info`). Behaviour follows mmengine's
``BaseDataset``: metainfo merging, ``filter_cfg``, ``indices``, lazy and full
initialisation, serialisation, refetching when the pipeline drops a sample.
"""

from __future__ import annotations

import copy
import functools
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

import numpy as np
from torch.utils.data import Dataset

from ..fileio import is_url, join_path
from ..logging import print_log
from ..transforms import Compose
from .serialized import (
    deserialize,
    normalize_index,
    serialize,
    serialized_subset,
    subset_positions,
)

_F = TypeVar("_F", bound=Callable[..., Any])
_ANNOTATION_KEYS = ("data_list", "data_address", "data_bytes")


def read_annotation_file(path: str) -> Any:
    """The object stored in annotation file ``path`` (json, yaml or pickle; local or URL),
    read by :func:`cadence.fileio.load` as mmengine's ``BaseDataset`` does."""
    from ..fileio import load

    return load(path)


def force_full_init(method: _F) -> _F:
    """Decorate a method so that it calls ``self.full_init()`` first when the object
    is not fully initialised yet (``_fully_initialized`` false), logging a warning."""

    @functools.wraps(method)
    def wrapper(obj: Any, *args: Any, **kwargs: Any) -> Any:
        if not hasattr(obj, "full_init"):
            raise AttributeError(f"{type(obj).__name__} has no full_init method")
        if not getattr(obj, "_fully_initialized", False):
            print_log(
                f"{type(obj).__name__}.{method.__name__} called before full_init(); "
                "calling full_init() now",
                logger="current",
                level=logging.WARNING,
            )
            obj.full_init()
            obj._fully_initialized = True
        return method(obj, *args, **kwargs)

    return cast(_F, wrapper)


def _is_abs(path: str) -> bool:
    return os.path.isabs(path) or is_url(path)


def _metainfo_value(value: Any) -> Any:
    """A string naming a local file becomes the file's lines (e.g. a class list)."""
    if isinstance(value, str) and not is_url(value) and os.path.isfile(value):
        with open(value, encoding="utf-8") as file:
            return [line.rstrip("\r\n") for line in file]
    return value


class MissingAnnotationFile(ValueError, TypeError):
    """A dataset without ``ann_file`` that does not override ``load_data_list``
    (mmengine failed with a TypeError there, hence both bases)."""


class BaseDataset(Dataset):
    """Samples read from an annotation file and processed by ``pipeline``.

    Args:
        ann_file: the annotation file, relative to ``data_root`` unless absolute.
        metainfo: meta information (class names, palette...); overrides the
            class's ``METAINFO``, which overrides the annotation file's. A string
            value naming a file is replaced by the file's lines.
        data_root: the folder ``ann_file`` and ``data_prefix`` are relative to.
        data_prefix: ``{key: folder}``; each sample's ``key`` path is joined to
            its folder (relative folders to ``data_root``).
        filter_cfg: options for :meth:`filter_data` (subclasses read them).
        indices: keep only these samples: an int ``n`` the first ``n`` (the last
            ``-n`` if negative), a sequence the samples at those positions.
        serialize_data: hold the samples as one numpy buffer that DataLoader
            workers share instead of copying.
        pipeline: transforms (or their configs) applied to each sample.
        test_mode: a pipeline returning ``None`` is then an error, not a refetch.
        lazy_init: do not read the annotation file until it is needed.
        max_refetch: how many other samples to try when the pipeline drops one.
    """

    METAINFO: dict = {}
    _fully_initialized: bool = False

    def __init__(
        self,
        ann_file: str | None = "",
        metainfo: Mapping[str, Any] | None = None,
        data_root: str | None = "",
        data_prefix: Mapping[str, str | None] | None = None,
        filter_cfg: Mapping[str, Any] | None = None,
        indices: int | Sequence[int] | None = None,
        serialize_data: bool = True,
        pipeline: Sequence[Any] | None = None,
        test_mode: bool = False,
        lazy_init: bool = False,
        max_refetch: int = 1000,
    ) -> None:
        self.ann_file = ann_file or ""
        self.data_root = data_root or ""
        prefixes = {"img_path": ""} if data_prefix is None else dict(data_prefix)
        self.data_prefix = {k: "" if v is None else v for k, v in prefixes.items()}
        self.filter_cfg = copy.deepcopy(filter_cfg)
        self._indices = indices
        self.serialize_data = serialize_data
        self.test_mode = test_mode
        self.max_refetch = max_refetch
        self.data_list: list[dict] = []
        self.data_bytes: np.ndarray
        self.data_address: np.ndarray
        self._metainfo = self._load_metainfo(copy.deepcopy(metainfo))
        self._join_prefix()
        self.pipeline = Compose(pipeline)
        if not lazy_init:
            self.full_init()

    # ------------------------------------------------------------ set-up
    @classmethod
    def _load_metainfo(cls, metainfo: Mapping[str, Any] | None = None) -> dict:
        """The class's ``METAINFO`` updated with ``metainfo`` (file names read as lists)."""
        merged = copy.deepcopy(cls.METAINFO)
        if metainfo is None:
            return merged
        if not isinstance(metainfo, Mapping) and callable(getattr(metainfo, "keys", None)):
            metainfo = {key: metainfo[key] for key in metainfo.keys()}  # a Config, say
        if not isinstance(metainfo, Mapping):
            raise TypeError(f"metainfo must be a dict, got {type(metainfo).__name__}")
        merged.update({key: _metainfo_value(value) for key, value in metainfo.items()})
        return merged

    def _join_prefix(self) -> None:
        """Make ``ann_file`` and the ``data_prefix`` folders relative to ``data_root``."""
        if self.ann_file and self.data_root and not _is_abs(self.ann_file):
            self.ann_file = join_path(self.data_root, self.ann_file)
        for key, prefix in self.data_prefix.items():
            if not isinstance(prefix, str):
                raise TypeError(
                    f"data_prefix['{key}'] must be a str (a folder), got {type(prefix).__name__}"
                )
            if self.data_root and not _is_abs(prefix):
                self.data_prefix[key] = join_path(self.data_root, prefix)

    def full_init(self) -> None:
        """Read the annotations, filter them, keep ``indices``, serialise (once)."""
        if self._fully_initialized:
            return
        self.data_list = self.load_data_list()
        self.data_list = self.filter_data()
        if self._indices is not None:
            self.data_list = self._get_unserialized_subset(self._indices)
        if self.serialize_data:
            self.data_bytes, self.data_address = self._serialize_data()
        self._fully_initialized = True

    def load_data_list(self) -> list[dict]:
        """The samples of ``ann_file``, each parsed by :meth:`parse_data_info`.

        The file's ``metainfo`` fills keys that the class's ``METAINFO`` and the
        ``metainfo`` argument do not set. Override for other annotation formats.
        """
        if not self.ann_file:
            raise MissingAnnotationFile(
                f"{type(self).__name__} has no ann_file: pass ann_file=... or override "
                "load_data_list()"
            )
        annotations = read_annotation_file(self.ann_file)
        if not isinstance(annotations, dict):
            raise TypeError(
                f"annotation file {self.ann_file!r} must hold a dict, "
                f"got {type(annotations).__name__}"
            )
        if "data_list" not in annotations or "metainfo" not in annotations:
            raise ValueError(
                f"annotation file {self.ann_file!r} must have the keys 'metainfo' and "
                f"'data_list', it has {sorted(annotations)}"
            )
        for key, value in annotations["metainfo"].items():
            self._metainfo.setdefault(key, value)
        data_list: list[dict] = []
        for raw in annotations["data_list"]:
            parsed = self.parse_data_info(raw)
            if isinstance(parsed, dict):
                data_list.append(parsed)
            elif isinstance(parsed, list) and all(isinstance(item, dict) for item in parsed):
                data_list.extend(parsed)
            else:
                raise TypeError(
                    "parse_data_info must return a dict or a list of dicts, "
                    f"got {type(parsed).__name__}"
                )
        return data_list

    def parse_data_info(self, raw_data_info: dict) -> dict | list[dict]:
        """One sample (or a list of them) from a ``data_list`` entry.

        By default each ``data_prefix`` key of the entry is joined to its folder.
        """
        for key, prefix in self.data_prefix.items():
            if key not in raw_data_info:
                raise KeyError(
                    f"annotation entry {raw_data_info!r} has no '{key}', which data_prefix "
                    f"names (data_prefix={self.data_prefix}); pass data_prefix=dict(...) "
                    "with the keys your entries have"
                )
            raw_data_info[key] = join_path(prefix, raw_data_info[key])
        return raw_data_info

    def filter_data(self) -> list[dict]:
        """The samples to keep (all by default); subclasses read ``self.filter_cfg``."""
        return self.data_list

    def get_cat_ids(self, idx: int) -> list[int]:
        """The category ids in sample ``idx`` (needed by ``ClassBalancedDataset``)."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_cat_ids")

    # ------------------------------------------------------------ access
    @property
    def metainfo(self) -> dict:
        """A copy of the meta information (class, argument and annotation file merged)."""
        return copy.deepcopy(self._metainfo)

    @force_full_init
    def __len__(self) -> int:
        return len(self.data_address) if self.serialize_data else len(self.data_list)

    @force_full_init
    def get_data_info(self, idx: int) -> dict:
        """A fresh copy of sample ``idx`` with its ``sample_idx`` (non-negative)."""
        position = normalize_index(idx, len(self))
        if self.serialize_data:
            info = deserialize(self.data_bytes, self.data_address, position)
        else:
            info = copy.deepcopy(self.data_list[position])
        info["sample_idx"] = position
        return info

    def prepare_data(self, idx: int) -> Any:
        """Sample ``idx`` through the pipeline."""
        return self.pipeline(self.get_data_info(idx))

    def _rand_another(self) -> int:
        """A random index (numpy's global RNG, seeded per worker)."""
        return int(np.random.randint(0, len(self)))

    def __getitem__(self, idx: int) -> Any:
        """Sample ``idx`` through the pipeline. In training, a sample the pipeline drops
        (``None``) is replaced by a random other one, up to ``max_refetch`` times."""
        if not self._fully_initialized:
            print_log(
                "call full_init() before using the dataset, so that DataLoader workers "
                "share its annotations instead of each reading them",
                logger="current",
                level=logging.WARNING,
            )
            self.full_init()
        if self.test_mode:
            data = self.prepare_data(idx)
            if data is None:
                raise RuntimeError(
                    f"the pipeline returned None for sample {idx} in test mode "
                    "(test-time pipelines must not drop samples)"
                )
            return data
        for _ in range(self.max_refetch + 1):
            data = self.prepare_data(idx)
            if data is not None:
                return data
            idx = self._rand_another()
        raise RuntimeError(
            f"the pipeline returned None for {self.max_refetch + 1} samples in a row "
            "(max_refetch); check the data paths and the pipeline"
        )

    # ------------------------------------------------------------ subsets
    def _get_unserialized_subset(self, indices: int | Sequence[int]) -> list[dict]:
        chosen = subset_positions(indices, len(self.data_list))
        if isinstance(chosen, slice):
            return self.data_list[chosen]
        return [self.data_list[i] for i in chosen]

    def _serialize_data(self) -> tuple[np.ndarray, np.ndarray]:
        """Serialise ``data_list`` into one buffer and empty the list.

        The samples' dicts are freed by reference counting as the list empties; no
        ``gc.collect()`` (mmengine's) is needed, and with torch loaded it costs ~0.4 s.
        """
        buffer, address = serialize(self.data_list)
        self.data_list.clear()
        return buffer, address

    @force_full_init
    def get_subset_(self, indices: int | Sequence[int]) -> None:
        """Keep only the samples ``indices`` selects (see ``indices`` above), in place."""
        if self.serialize_data:
            self.data_bytes, self.data_address = serialized_subset(
                self.data_bytes, self.data_address, indices
            )
        else:
            self.data_list = self._get_unserialized_subset(indices)

    @force_full_init
    def get_subset(self, indices: int | Sequence[int]) -> BaseDataset:
        """A copy of the dataset with only the samples ``indices`` selects."""
        subset = self._copy_without_annotation()
        if self.serialize_data:
            buffer, address = serialized_subset(self.data_bytes, self.data_address, indices)
            subset.data_bytes, subset.data_address = buffer.copy(), address.copy()
        else:
            subset.data_list = copy.deepcopy(self._get_unserialized_subset(indices))
        return subset

    def _copy_without_annotation(self) -> BaseDataset:
        """A deep copy of every attribute except the samples."""
        other = type(self).__new__(type(self))
        memo: dict[int, Any] = {id(self): other}
        for key, value in self.__dict__.items():
            if key not in _ANNOTATION_KEYS:
                other.__dict__[key] = copy.deepcopy(value, memo)
        other.data_list = []
        return other
