"""Streams that resume: the protocol, and a DataLoader that saves each worker's place.

**The protocol.** A resumable stream is a ``torch.utils.data.IterableDataset`` with

* ``state_dict()``: called in the process that iterates it (a worker, or the main
  process with ``num_workers=0``) right after it yielded an item; returns a picklable
  object, not changed by later iteration, that describes the position of its most
  recent iterator;
* ``load_state_dict(state)``: makes the *next* ``iter()`` continue from ``state``: it
  yields the first item not yet yielded when ``state`` was taken. ``iter()`` without a
  ``load_state_dict`` since the last one starts the stream from its beginning.

A stream that draws random numbers keeps its generator in that state; a stream that
shards itself by worker (``get_worker_info()``) gets, on resume, the state its own
worker saved.

**The loader.** :class:`StreamLoader` (what :func:`~cadence.dataset.build_dataloader`
builds for such a dataset) is a DataLoader with ``state_dict``/``load_state_dict`` of
its own. torch's DataLoader gives each worker a copy of the dataset and returns batches
in turn, worker 0, 1, ..., skipping workers whose stream ended (verified against
``_MultiProcessingDataLoaderIter._try_put_index``/``_next_data``); a new iterator
starts again at worker 0. Each batch is collated with ``(worker id, state after it)``
attached, which the main side removes (the model sees the batch unchanged) and records
(:class:`StreamPositions`). The saved state gives workers below the one due next
their state *before* their latest batch and ``skip`` that many batches: on resume the
new iterator starts at worker 0, those workers repeat their latest batch, the main side
drops them, and the sequence goes on exactly where it stopped.
"""

from __future__ import annotations

import copy
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from torch.utils.data import IterableDataset, get_worker_info
from torch.utils.data._utils.collate import default_collate, default_convert

from .explained_loader import ExplainedDataLoader


def is_resumable_stream(dataset: Any) -> bool:
    """Whether ``dataset`` is an ``IterableDataset`` with ``state_dict``/``load_state_dict``."""
    return (
        isinstance(dataset, IterableDataset)
        and callable(getattr(dataset, "state_dict", None))
        and callable(getattr(dataset, "load_state_dict", None))
    )


def resumes_itself(loader: Any) -> bool:
    """Whether ``loader`` saves and restores its own place (a :class:`StreamLoader`, torchdata's
    ``StatefulDataLoader``...): its ``state_dict`` is saved and restored as a whole."""
    return callable(getattr(loader, "state_dict", None)) and callable(
        getattr(loader, "load_state_dict", None)
    )


_RESTORED: weakref.WeakSet[Any] = weakref.WeakSet()


def mark_restored(loader: Any) -> None:
    """Note that ``loader`` was given a saved state: its next iterator continues by itself."""
    _RESTORED.add(loader)


def take_restored(loader: Any) -> bool:
    """Whether ``loader`` was given a saved state since the last call (which forgets it)."""
    if loader in _RESTORED:
        _RESTORED.discard(loader)
        return True
    return False


def fresh_state(num_workers: int) -> dict[str, Any]:
    """The state of a loader whose next iterator starts the stream from its beginning."""
    return {"num_workers": num_workers, "workers": {}, "skip": 0}


class StreamPositions:
    """The main side's record of each worker's place, batch after batch, in one iterator.

    ``start`` maps a worker id to the state its stream was loaded with (absent: the
    stream's beginning); ``skip`` is the number of batches the iterator drops first.
    :meth:`state_dict` is the loader state described in the module doc: with the next
    batch due from worker ``r``, workers ``j < r`` that gave a batch in the current turn
    keep their state before it, and ``skip`` counts them.
    """

    def __init__(
        self, num_workers: int, start: Mapping[int, Any] | None = None, skip: int = 0
    ) -> None:
        self.num_workers = num_workers
        self._streams = max(num_workers, 1)
        self._start = dict(start or {})
        self._skip = skip  # batches the iterator drops first; saved as is until it has
        self._after: dict[int, Any] = dict(self._start)
        self._before: dict[int, Any] = {}
        self._turn: list[int] = []  # workers that gave a batch in the current turn, in order
        self.ended = False

    def record(self, worker_id: int, state: Any) -> None:
        """Worker ``worker_id`` gave a batch, after which its stream is at ``state``."""
        if self._turn and worker_id <= self._turn[-1]:
            self._turn = []  # a new turn began at a lower worker id
        self._skip = 0
        self._before[worker_id] = self._after.get(worker_id)
        self._after[worker_id] = state
        self._turn.append(worker_id)

    def end(self) -> None:
        """The iterator ended: the next one starts a new pass over the stream."""
        self.ended = True

    def state_dict(self) -> dict[str, Any]:
        """Each worker's state and ``skip`` (see the class doc)."""
        if self.ended:
            return fresh_state(self.num_workers)
        if self._skip:  # nothing drawn yet from an iterator that resumes: its start
            return {"num_workers": self.num_workers, "workers": self._start, "skip": self._skip}
        complete = not self._turn or self._turn[-1] == self._streams - 1
        repeat = set() if complete else set(self._turn)
        workers = {
            worker: self._before[worker] if worker in repeat else self._after.get(worker)
            for worker in range(self._streams)
        }
        return {
            "num_workers": self.num_workers,
            "workers": {worker: state for worker, state in workers.items() if state is not None},
            "skip": len(repeat),
        }


class ResumingStream(IterableDataset):
    """The dataset a :class:`StreamLoader` hands torch: ``stream``, whose copy in each worker
    first loads the state pending for that worker. Other attributes are ``stream``'s."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.pending: dict[int, Any] | None = None  # worker id -> state, for the next iter()

    def __iter__(self) -> Iterator[Any]:
        pending, self.pending = self.pending, None  # in this process's copy: the first iter()
        info = get_worker_info()
        worker_id = 0 if info is None else info.id
        if pending and worker_id in pending:
            self.stream.load_state_dict(pending[worker_id])
        return iter(self.stream)

    def __len__(self) -> int:
        return len(self.stream)  # TypeError where the stream has no length

    def __getattr__(self, name: str) -> Any:
        if name == "stream" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.stream, name)


class TaggingCollate:
    """Collate with ``collate_fn``, then attach the worker id and its stream's state."""

    def __init__(self, collate_fn: Callable[[Any], Any], main: ResumingStream) -> None:
        self.collate_fn = collate_fn
        self.main = main  # the stream iterated with num_workers=0

    def __call__(self, items: Any) -> tuple[Any, int, Any]:
        batch = self.collate_fn(items)
        info = get_worker_info()
        if info is None:  # the main process: copy, as iteration goes on in this process
            return batch, 0, copy.deepcopy(self.main.stream.state_dict())
        copy_in_worker: Any = info.dataset
        return batch, info.id, copy_in_worker.stream.state_dict()


class StreamLoader(ExplainedDataLoader):
    """A DataLoader over a resumable stream (module doc) that saves and restores its place.

    Takes DataLoader's arguments (by keyword after ``dataset``); ``dataset`` must follow
    the protocol of the module doc. The attribute ``dataset`` is the stream's
    :class:`ResumingStream`; ``stream`` is the stream itself.
    """

    def __init__(self, dataset: Any, collate_fn: Any = None, **kwargs: Any) -> None:
        if not is_resumable_stream(dataset):
            raise TypeError(
                "StreamLoader needs an IterableDataset with state_dict() and load_state_dict(), "
                f"got {type(dataset).__name__}"
            )
        wrapped = ResumingStream(dataset)
        if collate_fn is None:
            batched = kwargs.get("batch_size", 1) is not None or "batch_sampler" in kwargs
            collate_fn = default_collate if batched else default_convert
        super().__init__(wrapped, collate_fn=TaggingCollate(collate_fn, wrapped), **kwargs)
        self.stream = dataset
        self._pending: dict[str, Any] | None = None  # loaded, for the next iterator
        self._positions: StreamPositions | None = None  # of the latest iterator

    def __iter__(self) -> Iterator[Any]:  # type: ignore[override]
        state, self._pending = self._pending or fresh_state(self.num_workers), None
        wrapped: ResumingStream = self.dataset  # type: ignore[assignment]
        wrapped.pending = dict(state["workers"])
        try:
            batches = super().__iter__()  # workers copy the dataset (and its pending states) now
        finally:
            wrapped.pending = None
        skip = int(state["skip"])
        positions = self._positions = StreamPositions(self.num_workers, state["workers"], skip)
        return _Untagged(batches, positions, skip)

    def state_dict(self) -> dict[str, Any]:
        """Each worker's stream state and the batches to drop on resume (module doc)."""
        if self._pending is not None:
            return copy.deepcopy(self._pending)
        if self._positions is None:
            return fresh_state(self.num_workers)
        return self._positions.state_dict()

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Make the next iterator continue from ``state`` (saved by :meth:`state_dict`)."""
        saved = int(state["num_workers"])
        if max(saved, 1) != max(self.num_workers, 1):
            message = (
                f"the stream's state was saved with num_workers={saved} and this loader has "
                f"num_workers={self.num_workers}: each worker streams its own share, so the "
                "stream restarts from its beginning and batches already trained on are repeated"
            )
            warnings.warn(message, UserWarning, stacklevel=2)
            self._pending = None
            return
        self._pending = {
            "num_workers": self.num_workers,
            "workers": {int(k): v for k, v in dict(state["workers"]).items()},
            "skip": int(state["skip"]),
        }


class _Untagged:
    """The batches of one :class:`StreamLoader` iterator, with their tags removed and recorded;
    the first ``skip`` batches (repeats of batches already consumed) are dropped."""

    def __init__(self, batches: Iterator[Any], positions: StreamPositions, skip: int) -> None:
        self._batches = batches
        self._positions = positions
        self._skip = skip

    def __iter__(self) -> _Untagged:
        return self

    def _next(self) -> Any:
        try:
            batch, worker_id, state = next(self._batches)
        except StopIteration:
            self._positions.end()
            raise
        self._positions.record(int(worker_id), state)
        return batch

    def __next__(self) -> Any:
        while self._skip:
            self._skip -= 1
            self._next()
        return self._next()

    def __len__(self) -> int:
        return len(self._batches)  # type: ignore[arg-type]


__all__ = ["ResumingStream", "StreamLoader", "StreamPositions", "TaggingCollate",
           "fresh_state", "is_resumable_stream", "mark_restored", "resumes_itself",
           "take_restored"]  # fmt: skip
