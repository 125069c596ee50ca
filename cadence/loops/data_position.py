"""Where a training loop stands in its data, counted in samples of the shared order.

cadence's samplers deal one shared order round robin (:mod:`cadence.dataset.sampler`):
once every rank has taken ``b`` batches of ``B`` samples, positions ``0 .. b*B*W - 1``
of the epoch's order are consumed, whatever the world size ``W``. The training loops
save that count with the :class:`Layout` that produced it (world size, per-rank batch
size), so a run resumed with another layout starts at the same place of the same order:
the rest of the epoch is seen, each sample once; only the make-up of each step's batch
differs (docs/running_on_a_cluster.md, "Changing the number of processes").
"""

from __future__ import annotations

import contextlib
import logging
import math
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch
from torch.utils.data import DataLoader, IterableDataset

from ..dataset.loader_state import index_sampler
from ..dataset.stream import is_resumable_stream, take_restored
from ..dist import get_world_size

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


@dataclass(frozen=True)
class Layout:
    """How a step consumes the shared order: ``world_size`` ranks of ``batch_size`` samples
    (``batch_size`` None: a batch sampler that sizes its own batches)."""

    world_size: int
    batch_size: int | None

    @property
    def global_batch(self) -> int | None:
        """Samples of the shared order one step consumes, all ranks together."""
        return None if self.batch_size is None else self.batch_size * self.world_size

    def describe(self) -> str:
        """E.g. ``'2 process(es) x 8 = 16'``."""
        return f"{self.world_size} process(es) x {self.batch_size} = {self.global_batch}"

    def state_dict(self) -> dict[str, Any]:
        return {"world_size": self.world_size, "batch_size": self.batch_size}


def loader_layout(dataloader: Any) -> Layout:
    """The layout of ``dataloader``: its sampler's world size (else the process group's)
    and its per-rank batch size."""
    sampler, batch_size = index_sampler(dataloader)
    world_size = getattr(sampler, "world_size", None)
    return Layout(int(world_size) if world_size else get_world_size(), batch_size)


@dataclass(frozen=True)
class DataPosition:
    """``samples`` positions of data epoch ``epoch``'s shared order are consumed."""

    epoch: int
    samples: int

    def state_dict(self, layout: Layout) -> dict[str, Any]:
        """What a checkpoint keeps: the position and the layout that reached it."""
        return {"epoch": self.epoch, "samples": self.samples, **layout.state_dict()}


def saved_layout(state: Mapping[str, Any], now: Layout) -> Layout:
    """The layout a loop state was saved with; states written before cadence recorded it
    give their sampler's world size and are taken to have had today's batch size."""
    data = state.get("data")
    if isinstance(data, Mapping):
        return Layout(int(data["world_size"]), data.get("batch_size"))
    sampler_state = dict(state.get("dataloader", {}).get("sampler", {}))
    return Layout(int(sampler_state.get("world_size", now.world_size)), now.batch_size)


def saved_position(state: Mapping[str, Any]) -> DataPosition | None:
    """The data position a loop state records (None: saved before cadence recorded it)."""
    data = state.get("data")
    if not isinstance(data, Mapping):
        return None
    return DataPosition(int(data["epoch"]), int(data["samples"]))


def batches_left(dataloader: Any, position: int) -> int | None:
    """How many batches this rank loads when the pass starts at ``position`` of the shared
    order (None where the sampler cannot say)."""
    sampler, batch_size = index_sampler(dataloader)
    count = getattr(sampler, "num_samples_from", None)
    if not callable(count) or not batch_size:
        return None
    samples = int(count(position))
    drop_last = bool(getattr(dataloader, "drop_last", False))
    return samples // batch_size if drop_last else math.ceil(samples / batch_size)


def continues_by_samples(dataloader: Any) -> bool:
    """Whether ``dataloader`` can start at a position of a shared order (cadence's samplers;
    not a batch sampler that sizes its own batches)."""
    if callable(getattr(getattr(dataloader, "batch_sampler", None), "set_start_batch", None)):
        return False
    sampler, batch_size = index_sampler(dataloader)
    return batch_size is not None and callable(getattr(sampler, "set_start_position", None))


def layout_change_message(saved: Layout, now: Layout, auto_scale_lr: bool, exact: bool) -> str:
    """The warning a run resumed with another layout gives (what continues, what differs);
    ``exact``: whether the sampler continues the order from the samples consumed."""
    message = (
        f"resumed with another data layout: the checkpoint was saved by {saved.describe()} "
        f"samples per step, this run has {now.describe()}. "
    )
    if exact:
        message += (
            "The data continues from the number of samples the saved run had consumed (each "
            "remaining sample of the epoch once); the global batch, the samples in each step "
            "and the iteration counts differ"
        )
    else:
        message += (
            "This sampler cannot start at a number of samples consumed (it has no "
            "set_start_position, or the batch sampler sizes its own batches): it starts at "
            "the saved batch count, so samples of this epoch may be repeated or skipped"
        )
    if auto_scale_lr and saved.global_batch != now.global_batch:
        message += (
            "; auto_scale_lr is enabled, but the learning rates continue from the checkpoint "
            f"(scaled for the global batch of {saved.global_batch}), not rescaled for "
            f"{now.global_batch}"
        )
    return message


def warn_if_changed(saved: Layout, dataloader: Any, runner: RunnerProtocol) -> None:
    """Warn (and log) when ``dataloader``'s layout is not the ``saved`` one."""
    now = loader_layout(dataloader)
    if saved == now:
        return
    auto_scale_lr = dict(runner.cfg.get("auto_scale_lr") or {})
    scaled, exact = bool(auto_scale_lr.get("enable")), continues_by_samples(dataloader)
    message = layout_change_message(saved, now, scaled, exact)
    warnings.warn(message, stacklevel=4)
    runner.logger.warning(message)


def start_at(dataloader: DataLoader, batches: int, samples: int) -> bool:
    """Make the next pass over ``dataloader`` skip what was consumed, without loading it.

    A batch sampler that knows its own batches (``set_start_batch``, e.g. one whose
    batch size changes per iteration) skips ``batches``; a sampler that deals a shared
    order (``set_start_position``) starts ``samples`` into it; any other sampler with
    ``set_start_index`` starts ``batches * batch_size`` samples into its rank's share.
    A loader given its own saved state (:mod:`cadence.dataset.stream`) continues by itself.
    Returns False where the sampler cannot start late (the caller replays).
    """
    if take_restored(dataloader) or (batches <= 0 and samples <= 0):
        return True
    set_start_batch = getattr(getattr(dataloader, "batch_sampler", None), "set_start_batch", None)
    if callable(set_start_batch):
        return bool(set_start_batch(batches))
    sampler, batch_size = index_sampler(dataloader)
    set_position = getattr(sampler, "set_start_position", None)
    if callable(set_position):
        set_position(samples)
        return True
    set_start = getattr(sampler, "set_start_index", None)
    if callable(set_start) and batch_size is not None:
        set_start(batches * batch_size)
        return True
    return False


def replay_message(dataloader: Any, batches: int) -> str:
    """The warning of a resume that replays ``batches`` batches: for a stream without a saved
    state it says that the stream restarts and what follows."""
    dataset = getattr(dataloader, "dataset", None)
    if not isinstance(dataset, IterableDataset):
        return "the train sampler cannot start mid-epoch; replaying batches to resume"
    stream = getattr(dataset, "stream", dataset)
    fix = (
        "build the dataloader from a config or with cadence.dataset.StreamLoader, which save it"
        if is_resumable_stream(stream) else "give the dataset state_dict()/load_state_dict()"
    )  # fmt: skip
    return (
        f"the training stream ({type(stream).__name__}, an IterableDataset) resumes without a "
        f"saved state: it restarts from its beginning, and the {batches} batch(es) already "
        "trained on are read again and discarded. Unless the stream yields the same items in "
        "the same order every time, batches are repeated or skipped. To resume it exactly, "
        f"{fix} (docs/datasets.md, 'Streams that resume')"
    )


def draws_once(dataloader: Any) -> bool:
    """Whether only the first ``iter()`` builds a new iterator (persistent workers)."""
    return bool(getattr(dataloader, "persistent_workers", False)) and bool(
        getattr(dataloader, "num_workers", 0)
    )


def iterate(dataloader: DataLoader, keep_rng: bool) -> Iterator[Any]:
    """A new iterator over ``dataloader``; with ``keep_rng`` torch's global RNG is left as is.

    Building a DataLoader iterator draws a base seed from torch's global
    generator. The uninterrupted run drew it when the epoch began (with
    persistent workers: when the run began), before the state a later
    checkpoint saved; drawing again on resume would shift every later random
    number (dropout, augmentation in the main process).
    """
    if not keep_rng:
        return iter(dataloader)
    state = torch.get_rng_state()
    try:
        return iter(dataloader)
    finally:
        torch.set_rng_state(state)


class BaseSeedDraw:
    """The base seed a DataLoader iterator draws from torch's RNG (or the loader's
    ``generator``) when it is built, drawn ahead: :meth:`of` makes the draw now and
    :meth:`replayed` lets an iterator built later draw the same seed, leaving the RNG
    as it is then. (mmengine's iteration-based loop builds its iterator, and so draws,
    when the loop is built.)"""

    def __init__(self, generator: torch.Generator | None) -> None:
        self._generator = generator
        self._state = generator.get_state() if generator is not None else torch.get_rng_state()
        torch.empty((), dtype=torch.int64).random_(generator=generator)  # what iter() draws

    @classmethod
    def of(cls, dataloader: Any) -> BaseSeedDraw | None:
        """The draw of ``dataloader``'s next iterator, made now (None for a loader that is
        not a torch DataLoader: nothing is known of what it draws)."""
        if not isinstance(dataloader, DataLoader):
            return None
        return cls(dataloader.generator)

    @contextlib.contextmanager
    def replayed(self) -> Iterator[None]:
        """Inside, the RNG the seed came from is where it was at the draw; after, as before."""
        generator = self._generator
        now = generator.get_state() if generator is not None else torch.get_rng_state()
        if generator is not None:
            generator.set_state(self._state)
        else:
            torch.set_rng_state(self._state)
        try:
            yield
        finally:
            if generator is not None:
                generator.set_state(now)
            else:
                torch.set_rng_state(now)


class EndlessIterator:
    """Iterate a dataloader forever, starting a new epoch of it when one ends, and keep
    count of the data position.

    The first pass starts at ``position`` (resume): ``samples`` into data epoch
    ``epoch``'s shared order, which is ``batches`` batches of this layout; its
    iterator is built without drawing from torch's RNG when ``keep_rng``. mmengine's
    ``_InfiniteDataloaderIterator``: built from a dataloader alone it starts at the
    beginning, and it is an iterator (``next(it)``); a restarted pass of a sampler that is
    not endless logs a WARNING once (the workers restart at each pass).
    """

    def __init__(
        self, dataloader: DataLoader, position: DataPosition | None = None, batches: int = 0,
        keep_rng: bool = False,
    ) -> None:  # fmt: skip
        position = DataPosition(0, 0) if position is None else position
        self.dataloader = dataloader
        self._batches: Iterator[Any] | None = None  # for __next__
        self.epoch = position.epoch
        self._origin = position.samples  # consumed before the current pass began
        self._done = 0  # batches yielded in the current pass
        self._global_batch = loader_layout(dataloader).global_batch or 0
        self._set_epoch()
        self.skipped = start_at(dataloader, batches, position.samples)
        if not self.skipped:  # the caller replays the batches: they are counted as they come
            self._origin = 0
        self._it: Iterator[Any] = iterate(dataloader, keep_rng)

    def _set_epoch(self) -> None:
        sampler, _ = index_sampler(self.dataloader)
        set_epoch = getattr(sampler, "set_epoch", None)
        if callable(set_epoch):
            set_epoch(self.epoch)

    @property
    def position(self) -> DataPosition:
        """The data epoch and the samples of its shared order consumed so far."""
        return DataPosition(self.epoch, self._origin + self._done * self._global_batch)

    def __iter__(self) -> Iterator[Any]:
        """The batches, epoch after epoch (a generator: cheap per batch)."""
        fresh = False  # the first pass may start at the end of an epoch (resume)
        while True:
            before = self._done
            for done, batch in enumerate(self._it, before + 1):  # counted as they come
                self._done = done
                yield batch
            if self._done == before and fresh:
                raise RuntimeError("the training dataloader yields no batches")
            self.epoch += 1
            self._origin = self._done = 0
            self._set_epoch()
            self._it = iter(self.dataloader)
            _warn_restarted()
            fresh = True

    def __next__(self) -> Any:
        """The next batch (as mmengine's iterator is used: ``next(loop.dataloader_iterator)``)."""
        if self._batches is None:
            self._batches = iter(self)
        return next(self._batches)


def _warn_restarted() -> None:
    from ..logging import print_log

    print_log(
        "the training dataloader reached its end and starts again (its workers restart at "
        "each pass); use an InfiniteSampler to iterate it endlessly",
        logger="current", level=logging.WARNING,
    )  # fmt: skip


#: mmengine's name (``mmengine.runner.loops._InfiniteDataloaderIterator``).
_InfiniteDataloaderIterator = EndlessIterator
