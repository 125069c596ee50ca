"""Rank-aware, resumable samplers: one pass per epoch, or an endless stream.

Both samplers deal indices round-robin: with ``W`` ranks, rank ``r`` takes
positions ``r, r+W, r+2W, ...`` of a shared order (every rank draws the same
permutation from the same seed). Both resume without replaying data:
``set_start_index(n)`` makes the next ``__iter__`` begin at the ``n``-th index
of this rank's list, and ``state_dict()`` / ``load_state_dict()`` carry the
seed and position. The sampler cannot know how many indices the model really
consumed (DataLoader workers prefetch), so the training loop computes ``n``
(batches done × batch size) and passes it in.

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


def _check_start(start: int) -> int:
    start = operator.index(start)
    if start < 0:
        raise ValueError(f"start index must be >= 0, got {start}")
    return start


def _permutation(size: int, shuffle: bool, seed: int) -> torch.Tensor:
    if not shuffle:
        return torch.arange(size)
    generator = torch.Generator()
    generator.manual_seed(seed)
    return torch.randperm(size, generator=generator)


def _require(state: Mapping[str, Any], keys: tuple[str, ...], owner: str) -> None:
    if not isinstance(state, Mapping):
        raise TypeError(f"{owner}.load_state_dict expects a dict, got {type(state).__name__}")
    missing = [key for key in keys if key not in state]
    if missing:
        raise KeyError(f"{owner} state is missing {missing}; it has {sorted(state)}")


def _warn_if_resharded(owner: str, state: Mapping[str, Any], now: Mapping[str, int]) -> None:
    changed = {k: (state[k], v) for k, v in now.items() if k in state and state[k] != v}
    if changed:
        what = ", ".join(f"{k} {old} -> {new}" for k, (old, new) in changed.items())
        warnings.warn(
            f"{owner} resumed with {what}: the start index may no longer point at the "
            "samples that were next when the state was saved",
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
        self._start_index = 0

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
        """This rank's indices for the current epoch, from the first (ignores the start index)."""
        size = len(self.dataset)
        order = _permutation(size, self.shuffle, self.seed + self.epoch)
        total = self.total_size
        if total > size:
            order = order.repeat(math.ceil(total / size))[:total]
        return order[self.rank : total : self.world_size]

    def __iter__(self) -> Iterator[int]:
        """Yield this rank's indices for the current epoch, from the pending start index."""
        start, self._start_index = self._start_index, 0
        indices = self.rank_indices()[start:].tolist()
        if not self.tag_positions:
            return iter(indices)
        epoch = self.epoch
        return (SampleIndex(index, epoch, p) for p, index in enumerate(indices, start))

    def __len__(self) -> int:
        """Indices this rank yields in a whole epoch."""
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Use this epoch's permutation from the next ``__iter__`` on (keeps the start index)."""
        self.epoch = operator.index(epoch)

    def set_start_index(self, start: int) -> None:
        """Make the next ``__iter__`` (only that one) begin at this rank's ``start``-th index."""
        self._start_index = _check_start(start)

    def state_dict(self) -> dict[str, Any]:
        """Epoch, seed and pending start index, plus the shard layout they refer to."""
        return {
            "epoch": self.epoch,
            "seed": self.seed,
            "start_index": self._start_index,
            "world_size": self.world_size,
            "dataset_size": len(self.dataset),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore epoch, seed and start index (warns if world size or dataset length changed)."""
        _require(state, ("epoch", "seed"), type(self).__name__)
        _warn_if_resharded(
            type(self).__name__,
            state,
            {"world_size": self.world_size, "dataset_size": len(self.dataset)},
        )
        self.epoch = operator.index(state["epoch"])
        self.seed = operator.index(state["seed"])
        self._start_index = _check_start(state.get("start_index", 0))


@DATA_SAMPLERS.register_module()
class InfiniteSampler(Sampler[int]):
    """An endless stream of indices for iteration-based training, split between ranks.

    The shared stream is permutation 0, permutation 1, ... of the dataset, where
    permutation ``k`` is drawn from ``seed + k`` (the order :class:`DefaultSampler`
    uses in epoch ``k``); rank ``r`` takes positions ``r, r+W, r+2W, ...`` of it.
    Because each permutation has its own seed, :meth:`set_start_index` jumps to
    any position without drawing the permutations before it. Every ``iter()``
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
        self._start_index = 0

    @property
    def size(self) -> int:
        """Length of the dataset (one pass of the shared stream)."""
        return len(self.dataset)

    def __iter__(self) -> Iterator[int]:
        """Yield this rank's stream from the pending start index (0 unless set)."""
        start, self._start_index = self._start_index, 0
        stream = self._stream(self.rank + start * self.world_size)
        if not self.tag_positions:
            return stream
        return (SampleIndex(index, 0, p) for p, index in enumerate(stream, start))

    def _stream(self, position: int) -> Iterator[int]:
        size = len(self.dataset)
        if size == 0:
            return
        while True:
            permutation, offset = divmod(position, size)
            chunk = _permutation(size, self.shuffle, self.seed + permutation)[
                offset :: self.world_size
            ]
            yield from chunk.tolist()
            position += len(chunk) * self.world_size

    def __len__(self) -> int:
        """Length of the dataset (the stream itself never ends)."""
        return len(self.dataset)

    def set_epoch(self, epoch: int) -> None:
        """Accepted for a uniform sampler interface; the stream does not depend on it."""

    def set_start_index(self, start: int) -> None:
        """Make the next ``__iter__`` (only that one) begin at this rank's ``start``-th index."""
        self._start_index = _check_start(start)

    def state_dict(self) -> dict[str, Any]:
        """Seed and pending start index, plus the shard layout they refer to."""
        return {
            "seed": self.seed,
            "start_index": self._start_index,
            "world_size": self.world_size,
            "dataset_size": len(self.dataset),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore seed and start index (warns if world size or dataset length changed)."""
        _require(state, ("seed",), type(self).__name__)
        _warn_if_resharded(
            type(self).__name__,
            state,
            {"world_size": self.world_size, "dataset_size": len(self.dataset)},
        )
        self.seed = operator.index(state["seed"])
        self._start_index = _check_start(state.get("start_index", 0))
