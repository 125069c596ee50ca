"""Seed python ``random``, numpy and torch in DataLoader worker processes.

Two formulas (documented because runs must be reproducible from them). When a
worker starts::

    worker_seed = SeedSequence([seed mod 2**64, rank, worker_id, epoch])
                      .generate_state(1, uint64)[0] mod 2**63
    random.seed(worker_seed); torch.manual_seed(worker_seed)
    numpy.random.seed(worker_seed mod 2**32)

``epoch`` is the sampler's ``epoch`` attribute when the workers start (0 for
samplers without one). Hashing the numbers keeps nearby seeds from sharing
worker streams (unlike ``seed + id``).

Then, before each batch whose indices come from a cadence sampler with
``tag_positions`` on (:func:`cadence.dataset.build_dataloader` turns it on
when there are workers), the worker seeds the same three generators again::

    batch_seed = SeedSequence([seed mod 2**64, rank, epoch, position, 1])
                     .generate_state(1, uint64)[0] mod 2**63

where ``epoch`` and ``position`` say where the batch's first index sits in
the sampler's order (:class:`SampleIndex`; a batch sampler may wrap it as the
first element of a tuple, like a short cycle's ``(index, crop_size)``). A
batch's random numbers then depend on its place in the data order only, not
on which worker loads it, how many workers there are or whether they persist
between epochs: a run resumed in the middle of an epoch draws exactly what
the uninterrupted run drew.
"""

from __future__ import annotations

import operator
import random
import warnings
from typing import Any

import numpy as np
import torch
from torch.utils.data import IterableDataset, get_worker_info

from .multigrid import with_index


def worker_seed(seed: int, rank: int, worker_id: int, epoch: int = 0) -> int:
    """The seed of worker ``worker_id`` on rank ``rank`` in epoch ``epoch`` (see module doc)."""
    entropy = [operator.index(seed) % 2**64, rank, worker_id, epoch]
    state = np.random.SeedSequence(entropy).generate_state(1, np.uint64)
    return int(state[0]) % 2**63


def batch_seed(seed: int, rank: int, epoch: int, position: int) -> int:
    """The seed of the batch whose first index sits at ``position`` of ``epoch`` (module doc)."""
    entropy = [operator.index(seed) % 2**64, rank, epoch, position, 1]
    state = np.random.SeedSequence(entropy).generate_state(1, np.uint64)
    return int(state[0]) % 2**63


def seed_everything_in_worker(seed: int) -> None:
    """Seed python ``random``, numpy's global generator and torch with ``seed``."""
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


class SampleIndex(int):
    """A dataset index that also says where the sampler yielded it.

    It is an ``int`` (a dataset indexes with it as usual) with two extra
    attributes: ``epoch``, the sampler's epoch, and ``position``, the place of
    the index in this rank's order for that epoch (or stream).
    """

    epoch: int
    position: int

    def __new__(cls, index: int, epoch: int, position: int) -> SampleIndex:
        obj = super().__new__(cls, index)
        obj.epoch = epoch
        obj.position = position
        return obj

    def __reduce__(self) -> tuple[Any, ...]:
        return (SampleIndex, (int(self), self.epoch, self.position))


def _tagged(item: Any) -> SampleIndex | None:
    """The :class:`SampleIndex` of a batch item (itself, or a tuple's first element)."""
    if isinstance(item, tuple):
        item = item[0] if item else None
    return item if isinstance(item, SampleIndex) else None


def _untagged(item: Any) -> Any:
    """``item`` with its :class:`SampleIndex` made a plain ``int`` (a tuple keeps its type)."""
    index = _tagged(item)
    return item if index is None else with_index(item, int(index))


class BatchSeeding:
    """A dataset's ``__getitems__`` that seeds the worker from the batch's place first.

    Installed on the worker's copy of the dataset by :class:`WorkerSeeder`.
    Batches without :class:`SampleIndex` positions are fetched unchanged.
    """

    def __init__(self, dataset: Any, seed: int, rank: int) -> None:
        self.dataset = dataset
        self.seed = seed
        self.rank = rank
        self.fetch = getattr(dataset, "__getitems__", None)

    def __call__(self, indices: list[Any]) -> Any:
        """Seed from the first index's (epoch, position), then load the samples.

        An item may also be a tuple whose first element is the index (e.g. a
        short cycle's ``(index, crop_size)``); only that element is replaced.
        """
        first = _tagged(indices[0]) if indices else None
        if first is not None:
            value = batch_seed(self.seed, self.rank, first.epoch, first.position)
            random.seed(value)
            np.random.seed(value % 2**32)
            torch.default_generator.manual_seed(value)  # torch.manual_seed is 100x slower
            indices = [_untagged(i) for i in indices]
        if callable(self.fetch):  # the dataset's own batched loading
            return self.fetch(indices)
        return [self.dataset[i] for i in indices]


def _seed_each_batch(seed: int, rank: int) -> None:
    """Make the calling worker's dataset reseed before each batch (when it can be changed)."""
    info = get_worker_info()
    if info is None or isinstance(info.dataset, IterableDataset):
        return
    dataset: Any = info.dataset
    if isinstance(getattr(dataset, "__getitems__", None), BatchSeeding):
        return
    try:
        dataset.__getitems__ = BatchSeeding(dataset, seed, rank)
    except (AttributeError, TypeError):  # __slots__ or a frozen class: per-worker seeds only
        pass


def _epoch_of(source: Any) -> int:
    epoch = getattr(source, "epoch", 0)
    try:
        return max(operator.index(epoch), 0)
    except TypeError:
        return 0


class WorkerSeeder:
    """A picklable ``worker_init_fn`` that seeds each worker from (seed, rank, worker id, epoch)
    and then each batch from its place in the data order (see the module doc).

    Args:
        seed: the run's seed.
        rank: this process's rank.
        epoch_source: an object whose ``epoch`` attribute is read when a worker
            starts (the sampler); ``None`` means epoch 0.
        disable_subprocess_warning: silence warnings in every worker but worker 0.
    """

    def __init__(
        self,
        seed: int,
        rank: int,
        epoch_source: Any = None,
        disable_subprocess_warning: bool = False,
    ) -> None:
        self.seed = operator.index(seed)
        self.rank = operator.index(rank)
        self.epoch_source = epoch_source
        self.disable_subprocess_warning = bool(disable_subprocess_warning)

    def __call__(self, worker_id: int) -> None:
        """Seed the calling worker process."""
        epoch = _epoch_of(self.epoch_source)
        seed_everything_in_worker(worker_seed(self.seed, self.rank, worker_id, epoch))
        _seed_each_batch(self.seed, self.rank)
        if self.disable_subprocess_warning and worker_id != 0:
            warnings.simplefilter("ignore")


def worker_init_fn(
    worker_id: int,
    num_workers: int,
    rank: int,
    seed: int,
    disable_subprocess_warning: bool = False,
) -> None:
    """mmengine's ``worker_init_fn`` signature, seeding with cadence's formula at epoch 0.

    ``num_workers`` is accepted for compatibility; the formula does not need it.
    """
    WorkerSeeder(seed, rank, None, disable_subprocess_warning)(worker_id)


#: mmengine's name for :func:`worker_init_fn`.
default_worker_init_fn = worker_init_fn
