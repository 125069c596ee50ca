"""A sample that fails to load says which sample it was, and where it was loaded.

:func:`note_sample_errors` gives a map-style dataset a ``__getitems__`` (the
batched loading that torch's DataLoader calls when a dataset has one) that
loads the batch's samples one by one, as torch does without it, and adds a
note to the exception of a sample that raises::

    cadence: while loading sample 17 (/data/img_17.jpg) of MyDataset in DataLoader
    worker 1 of 2 (pid 4711)

The exception stays the one the dataset raised (its type, message and
traceback), so code that catches it works as before; with workers, torch
re-raises it in the main process with the worker's traceback text, the note
included. The note names the dataset's own description of the index when the
dataset offers one (:class:`DescribesIndex`: ``describe_index(i)``, or
mmengine's ``get_data_info(i)``). Python prints notes from 3.11 on.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from torch.utils.data import IterableDataset, get_worker_info

#: Keys of an mmengine ``get_data_info`` dict that say where a sample comes from.
_SOURCE_KEYS = ("img_path", "filename", "file_name", "path", "video_path", "ann_path",
                "seg_map_path")  # fmt: skip
_LONGEST = 200


@runtime_checkable
class DescribesIndex(Protocol):
    """A dataset that can say what sample ``index`` is (a file path, a record id...)."""

    def describe_index(self, index: int) -> str:
        """A short description of sample ``index``, for error messages."""
        ...


def describe_sample(dataset: Any, index: Any) -> str | None:
    """The dataset's description of ``index``: ``describe_index(i)``, else the source of
    mmengine's ``get_data_info(i)`` (its path keys, or the whole dict, shortened); ``None``
    when it offers neither. Never raises: a failing description says so instead."""
    position = index[0] if isinstance(index, tuple) and index else index
    try:
        describe = getattr(dataset, "describe_index", None)
        if callable(describe):
            return _short(str(describe(int(position))))
        info_of = getattr(dataset, "get_data_info", None)
        if not callable(info_of):
            return None
        info = info_of(int(position))
    except Exception as exc:
        return f"describing it raised {type(exc).__name__}: {_short(str(exc))}"
    if isinstance(info, Mapping):
        sources = [str(info[key]) for key in _SOURCE_KEYS if info.get(key)]
        if sources:
            return _short(", ".join(sources))
    return _short(repr(info))


def _short(text: str) -> str:
    return text if len(text) <= _LONGEST else text[: _LONGEST - 3] + "..."


def where_loaded() -> str:
    """``'DataLoader worker 1 of 2 (pid 4711)'``, or ``'the main process (num_workers=0)'``."""
    info = get_worker_info()
    if info is None:
        return "the main process (num_workers=0)"
    return f"DataLoader worker {info.id} of {info.num_workers} (pid {os.getpid()})"


def add_note(exc: BaseException, note: str) -> None:
    """Add ``note`` to ``exc`` (``BaseException.add_note``; kept in ``__notes__`` on 3.10)."""
    add = getattr(exc, "add_note", None)
    if callable(add):
        add(note)
        return
    try:
        exc.__notes__ = [*getattr(exc, "__notes__", []), note]  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        pass


class NotedLoading:
    """A dataset's ``__getitems__`` that notes which sample raised (see the module doc).

    Args:
        dataset: the dataset it is installed on.
        fetch: the dataset's own ``__getitems__`` when it had one: then a failing batch
            is noted with all its indices (the dataset loads them together).
    """

    def __init__(self, dataset: Any, fetch: Callable[[list[Any]], Any] | None = None) -> None:
        self.dataset = dataset
        self.fetch = fetch

    def __call__(self, indices: list[Any]) -> Any:
        """Load the samples of ``indices`` (a list, as the collate function expects)."""
        if self.fetch is not None:
            try:
                return self.fetch(indices)
            except Exception as exc:
                shown = [_plain(i) for i in indices]
                add_note(exc, f"cadence: while loading samples {shown} of "
                              f"{type(self.dataset).__name__} in {where_loaded()}")  # fmt: skip
                raise
        samples = []
        dataset = self.dataset
        for index in indices:
            try:
                samples.append(dataset[index])
            except Exception as exc:
                described = describe_sample(dataset, index)
                about = f" ({described})" if described else ""
                add_note(exc, f"cadence: while loading sample {_plain(index)}{about} of "
                              f"{type(dataset).__name__} in {where_loaded()}")  # fmt: skip
                raise
        return samples


def _plain(index: Any) -> Any:
    """An index as it reads (a :class:`~cadence.dataset.SampleIndex` as its int)."""
    if isinstance(index, tuple):
        return tuple(_plain(i) for i in index)
    return int(index) if isinstance(index, int) else index


def note_sample_errors(dataset: Any) -> bool:
    """Install :class:`NotedLoading` on ``dataset`` (once); whether it is installed.

    Iterable datasets (no indices) and datasets that take no attributes are left alone.
    """
    if isinstance(dataset, IterableDataset) or not hasattr(dataset, "__getitem__"):
        return False
    current = getattr(dataset, "__getitems__", None)
    if isinstance(current, NotedLoading):
        return True
    try:
        dataset.__getitems__ = NotedLoading(dataset, current if callable(current) else None)
    except (AttributeError, TypeError):  # __slots__ or a frozen class
        return False
    return True


__all__ = ["DescribesIndex", "NotedLoading", "describe_sample", "note_sample_errors"]
