"""Rank-aware, resumable samplers: one pass per epoch, or an endless stream.

Both samplers deal indices round-robin: with ``W`` ranks, rank ``r`` takes
positions ``r, r+W, r+2W, ...`` of a shared order (every rank draws the same
permutation from the same seed). Both resume without replaying data:
``set_start_index(n)`` makes the next ``__iter__`` begin at the ``n``-th index
of this rank's list, and ``set_start_position(p)`` at position ``p`` of the
shared order (all ranks together: rank ``r`` then takes ``p + r, p + r + W, ...``),
which is what a run resumed on a different number of ranks needs;
``state_dict()`` / ``load_state_dict()`` carry the seed and position. The
sampler cannot know how many indices the model really consumed (DataLoader
workers prefetch), so the training loop computes the position (batches done ×
batch size, or samples of the shared order consumed) and passes it in.

With ``tag_positions`` set (``build_dataloader`` sets it when DataLoader
workers seed themselves), both yield :class:`~cadence.dataset.worker.SampleIndex`
ints that also carry ``(epoch, position)``, so a worker can seed each batch
from its place in the order rather than from the worker that happens to load it.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Iterator, Mapping, Sized
from typing import Any

import torch
from torch.utils.data import Sampler

from ..dist import get_dist_info, sync_random_seed
from ..registry import DATA_SAMPLERS
from ..registry.constraints import validated_by_construction
from .worker import SampleIndex


def _resolve_shard(rank: int | None, world_size: int | None) -> tuple[int, int]:
    dist_rank, dist_world = get_dist_info()
    rank = dist_rank if rank is None else operator.index(rank)
    world_size = dist_world if world_size is None else operator.index(world_size)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"need 0 <= rank < world_size, got rank={rank}, world_size={world_size}")
    return rank, world_size


def _resolve_seed(seed: int | None) -> int:
    return sync_random_seed() if seed is None else operator.index(seed)


def _check_start(start: int, what: str = "start index") -> int:
    start = operator.index(start)
    if start < 0:
        raise ValueError(f"{what} must be >= 0, got {start}")
    return start


def _start_state(position: int, world_size: int) -> dict[str, int]:
    """The pending start as saved: per rank (``start_index``), plus the position in the
    shared order where it is not a whole number of rounds (resumed on other ranks)."""
    index, rest = divmod(position, world_size)
    state = {"start_index": index}
    if rest:
        state["start_position"] = position
    return state


def _loaded_start(state: Mapping[str, Any], world_size: int) -> int:
    """The pending start of ``state`` as a position in the shared order; a per-rank start
    index counts in rounds of the world size it was saved with."""
    if "start_position" in state:
        return _check_start(state["start_position"], "start position")
    saved_world = operator.index(state.get("world_size", world_size))
    return _check_start(state.get("start_index", 0)) * saved_world


def _permutation(size: int, shuffle: bool, seed: int) -> torch.Tensor:
    if not shuffle:
        return torch.arange(size)
    generator = torch.Generator()
    generator.manual_seed(seed)
    return torch.randperm(size, generator=generator)


def _passes(size: int, shuffle: bool, seed: int) -> Iterator[torch.Tensor]:
    """Permutation 0, 1, ... of ``range(size)``, drawn in turn from one generator seeded
    with ``seed`` (as mmengine's ``InfiniteSampler``); ``arange`` without ``shuffle``."""
    generator = torch.Generator()
    generator.manual_seed(seed)
    while True:
        yield torch.randperm(size, generator=generator) if shuffle else torch.arange(size)


def _require(state: Mapping[str, Any], keys: tuple[str, ...], owner: str) -> None:
    if not isinstance(state, Mapping):
        raise TypeError(f"{owner}.load_state_dict expects a dict, got {type(state).__name__}")
    missing = [key for key in keys if key not in state]
    if missing:
        raise KeyError(f"{owner} state is missing {missing}; it has {sorted(state)}")


def _warn_if_resized(owner: str, state: Mapping[str, Any], size: int) -> None:
    """A pending start counts positions of the shared order, which another world size
    deals out differently but keeps; another dataset length changes the order itself."""
    if "dataset_size" in state and state["dataset_size"] != size:
        warnings.warn(
            f"{owner} resumed with dataset_size {state['dataset_size']} -> {size}: the start "
            "position may no longer point at the samples that were next when the state was saved",
            stacklevel=3,
        )


@DATA_SAMPLERS.register_module()
class DefaultSampler(Sampler[int]):
    """One pass over the dataset per epoch, split between ranks; works in one process too.

    Args:
        dataset: anything with ``len()``.
        shuffle: draw a new permutation each epoch (from ``seed + epoch``),
            else visit indices in order.
        seed: shuffle seed, identical on every rank; ``None`` draws one on
            rank 0 and shares it (:func:`cadence.dist.sync_random_seed`).
        round_up: repeat indices from the start of the order so that every rank
            gets the same count, ``ceil(len / W)``; without it rank ``r`` gets
            ``ceil((len - r) / W)`` and nothing is repeated.
        rank, world_size: this process's shard; default from :mod:`cadence.dist`.

    Attributes:
        tag_positions: yield :class:`SampleIndex` (``epoch``, position in this
            rank's list) instead of plain ints; off by default.
    """

    def __init__(
        self,
        dataset: Sized,
        shuffle: bool = True,
        seed: int | None = None,
        round_up: bool = True,
        *,
        rank: int | None = None,
        world_size: int | None = None,
    ) -> None:
        self.rank, self.world_size = _resolve_shard(rank, world_size)
        self.dataset = dataset
        self.shuffle = bool(shuffle)
        self.seed = _resolve_seed(seed)
        self.round_up = bool(round_up)
        self.epoch = 0
        self.tag_positions = False
        self._start = 0  # pending start: a position in the shared order

    @property
    def total_size(self) -> int:
        """Length of the shared order after padding (all ranks together)."""
        size = len(self.dataset)
        return math.ceil(size / self.world_size) * self.world_size if self.round_up else size

    @property
    def num_samples(self) -> int:
        """How many indices this rank gets per epoch."""
        if self.round_up:
            return math.ceil(len(self.dataset) / self.world_size)
        return max(math.ceil((len(self.dataset) - self.rank) / self.world_size), 0)

    def rank_indices(self) -> torch.Tensor:
        """This rank's indices for the current epoch, from the first (ignores the start)."""
        return self.indices_from(0)

    def indices_from(self, position: int) -> torch.Tensor:
        """This rank's indices of the current epoch from ``position`` of the shared order on.

        With ``round_up`` the rest of the order is padded (from its start) to a
        multiple of the world size, so that every rank gets the same count.
        """
        size = len(self.dataset)
        order = _permutation(size, self.shuffle, self.seed + self.epoch)
        end = size
        if self.round_up:
            end = position + math.ceil(max(size - position, 0) / self.world_size) * self.world_size
        if end > size:
            order = order.repeat(math.ceil(end / size))[:end]
        return order[position + self.rank : end : self.world_size]

    def num_samples_from(self, position: int) -> int:
        """How many indices this rank yields in a pass that starts at ``position``."""
        size, world = len(self.dataset), self.world_size
        if self.round_up:
            return math.ceil(max(size - position, 0) / world)
        return max(math.ceil((size - position - self.rank) / world), 0)

    def __iter__(self) -> Iterator[int]:
        """Yield this rank's indices for the current epoch, from the pending start."""
        start, self._start = self._start, 0
        indices = self.indices_from(start).tolist()
        if not self.tag_positions:
            return iter(indices)
        epoch, first = self.epoch, (start + self.rank) // self.world_size
        return (SampleIndex(index, epoch, p) for p, index in enumerate(indices, first))

    def __len__(self) -> int:
        """Indices this rank yields in a whole epoch."""
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use this epoch's permutation from the next ``__iter__`` on (keeps the start index)."""
        self.epoch = operator.index(epoch)

    def set_start_index(self, start: int) -> None:
        """Make the next ``__iter__`` (only that one) begin at this rank's ``start``-th index."""
        self._start = _check_start(start) * self.world_size

    def set_start_position(self, position: int) -> None:
        """Make the next ``__iter__`` (only that one) begin at ``position`` of the shared
        order: the ranks together skip the first ``position`` samples of the epoch."""
        self._start = _check_start(position, "start position")

    def state_dict(self) -> dict[str, Any]:
        """Epoch, seed and pending start, plus the shard layout they refer to."""
        return {
            "epoch": self.epoch,
            "seed": self.seed,
            **_start_state(self._start, self.world_size),
            "world_size": self.world_size,
            "dataset_size": len(self.dataset),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore epoch, seed and pending start (warns if the dataset length changed; a
        pending start saved by another world size keeps its place in the shared order)."""
        _require(state, ("epoch", "seed"), type(self).__name__)
        _warn_if_resized(type(self).__name__, state, len(self.dataset))
        self.epoch = operator.index(state["epoch"])
        self.seed = operator.index(state["seed"])
        self._start = _loaded_start(state, self.world_size)


@DATA_SAMPLERS.register_module()
class InfiniteSampler(Sampler[int]):
    """An endless stream of indices for iteration-based training, split between ranks.

    The shared stream is permutation 0, permutation 1, ... of the dataset, drawn one
    after the other from one generator seeded with ``seed`` (mmengine's order, so
    iteration-based runs see the same samples); rank ``r`` takes positions
    ``r, r+W, r+2W, ...`` of it. :meth:`set_start_index` to a position in pass ``k``
    draws the ``k`` permutations before it again (one ``randperm`` each). Every ``iter()``
    starts the stream over (at the pending start index, else at 0), so a
    training loop keeps one iterator for the whole run.

    Args:
        dataset: anything with ``len()``; an empty dataset gives an empty stream.
        shuffle: shuffle each pass, else repeat ``0..len-1``.
        seed: identical on every rank; ``None`` draws one on rank 0 and shares it.
        rank, world_size: this process's shard; default from :mod:`cadence.dist`.

    Attributes:
        tag_positions: yield :class:`SampleIndex` (epoch 0, position in this
            rank's stream) instead of plain ints; off by default.
    """

    def __init__(
        self,
        dataset: Sized,
        shuffle: bool = True,
        seed: int | None = None,
        *,
        rank: int | None = None,
        world_size: int | None = None,
    ) -> None:
        self.rank, self.world_size = _resolve_shard(rank, world_size)
        self.dataset = dataset
        self.shuffle = bool(shuffle)
        self.seed = _resolve_seed(seed)
        self.tag_positions = False
        self._start = 0  # pending start: a position in the shared stream

    @property
    def size(self) -> int:
        """Length of the dataset (one pass of the shared stream)."""
        return len(self.dataset)

    def __iter__(self) -> Iterator[int]:
        """Yield this rank's stream from the pending start (0 unless set)."""
        start, self._start = self._start, 0
        stream = self._stream(start + self.rank)
        if not self.tag_positions:
            return stream
        first = (start + self.rank) // self.world_size
        return (SampleIndex(index, 0, p) for p, index in enumerate(stream, first))

    def _stream(self, position: int) -> Iterator[int]:
        size = len(self.dataset)
        if size == 0:
            return
        passes = _passes(size, self.shuffle, self.seed)
        done = 0  # permutations drawn so far
        while True:
            permutation, offset = divmod(position, size)
            while done <= permutation:
                order = next(passes)
                done += 1
            chunk = order[offset :: self.world_size]
            yield from chunk.tolist()
            position += len(chunk) * self.world_size

    def __len__(self) -> int:
        """Length of the dataset (the stream itself never ends)."""
        return len(self.dataset)

    def set_epoch(self, epoch: int) -> None:
        """Accepted for a uniform sampler interface; the stream does not depend on it."""

    def set_start_index(self, start: int) -> None:
        """Make the next ``__iter__`` (only that one) begin at this rank's ``start``-th index."""
        self._start = _check_start(start) * self.world_size

    def set_start_position(self, position: int) -> None:
        """Make the next ``__iter__`` (only that one) begin at ``position`` of the shared
        stream: the ranks together skip its first ``position`` samples."""
        self._start = _check_start(position, "start position")

    def state_dict(self) -> dict[str, Any]:
        """Seed and pending start, plus the shard layout they refer to."""
        return {
            "seed": self.seed,
            **_start_state(self._start, self.world_size),
            "world_size": self.world_size,
            "dataset_size": len(self.dataset),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore seed and pending start (warns if the dataset length changed; a pending
        start saved by another world size keeps its place in the shared stream)."""
        _require(state, ("seed",), type(self).__name__)
        _warn_if_resized(type(self).__name__, state, len(self.dataset))
        self.seed = operator.index(state["seed"])
        self._start = _loaded_start(state, self.world_size)


def _one_sample() -> dict[str, Any]:
    """Stand-ins for what the dataloader builder gives a sampler (for ``cadence check``)."""
    return {"dataset": [0], "seed": 0}


validated_by_construction(DefaultSampler, _one_sample)
validated_by_construction(InfiniteSampler, _one_sample)
