"""Training loops: by epoch and by iteration."""

from __future__ import annotations

import bisect
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from torch.utils.data import DataLoader

from ..registry import LOOPS
from .base_loop import BaseLoop


def _parse_intervals(
    start: int, interval: int, dynamic: Sequence[tuple[int, int]] | None
) -> tuple[list[int], list[int]]:
    milestones, intervals = [0], [interval]
    for milestone, value in sorted(dynamic or []):
        if milestone < start:
            raise ValueError(f"dynamic_intervals milestone {milestone} comes before val_begin")
        milestones.append(milestone)
        intervals.append(value)
    return milestones, intervals


def index_sampler(dataloader: Any) -> tuple[Any, int | None]:
    """The sampler that yields a dataloader's indices, and its batch size.

    With a configured batch sampler, ``dataloader.sampler`` is torch's unused
    default; the real one sits inside the batch sampler.
    """
    sampler = getattr(dataloader, "sampler", None)
    batch_size = getattr(dataloader, "batch_size", None)
    if batch_size is None:
        batch_sampler = getattr(dataloader, "batch_sampler", None)
        sampler = getattr(batch_sampler, "sampler", None)
        batch_size = getattr(batch_sampler, "batch_size", None)
    return sampler, batch_size


def _start_at(dataloader: DataLoader, batches: int) -> bool:
    """Make the next pass over ``dataloader`` skip ``batches`` batches without loading them."""
    if batches <= 0:
        return True
    sampler, batch_size = index_sampler(dataloader)
    set_start = getattr(sampler, "set_start_index", None)
    if callable(set_start) and batch_size is not None:
        set_start(batches * batch_size)
        return True
    return False


class _TrainLoop(BaseLoop):
    """Shared parts of the two training loops."""

    by_epoch = True

    def __init__(
        self,
        runner: Any,
        dataloader: DataLoader | Mapping[str, Any],
        val_begin: int,
        val_interval: int,
        dynamic_intervals: Sequence[tuple[int, int]] | None,
    ) -> None:
        super().__init__(runner, dataloader)
        self._epoch = 0
        self._iter = 0
        self._inner_iter = 0  # batches finished in the current epoch
        self._finishing = ""  # "iter" or "epoch" while its after-hooks run
        self.val_begin = val_begin
        self.val_interval = val_interval
        self.stop_training = False
        self._milestones, self._intervals = _parse_intervals(
            val_begin, val_interval, dynamic_intervals
        )

    @property
    def epoch(self) -> int:
        return self._epoch

    @property
    def iter(self) -> int:
        return self._iter

    @property
    def inner_iter(self) -> int:
        return self._inner_iter

    def _update_val_interval(self, position: int) -> None:
        index = bisect.bisect(self._milestones, position)
        self.val_interval = self._intervals[index - 1]

    def run_iter(self, batch_idx: int, data_batch: Any) -> None:
        """One optimization step and its hooks."""
        runner = self._runner
        runner.call_hook("before_train_iter", batch_idx=batch_idx, data_batch=data_batch)
        outputs = runner.model.train_step(data_batch, optim_wrapper=runner.optim_wrapper)
        extra = runner.optim_wrapper.pop_log_vars()
        if extra:
            outputs = {**outputs, **extra}
        self._finishing = "iter"
        runner.call_hook(
            "after_train_iter", batch_idx=batch_idx, data_batch=data_batch, outputs=outputs
        )
        self._finishing = ""
        self._iter += 1
        self._inner_iter += 1

    def state_dict(self) -> dict[str, Any]:
        """Position to resume from; inside an after-hook the current step counts as done."""
        epoch, it, inner = self._epoch, self._iter, self._inner_iter
        if self._finishing == "iter":
            it, inner = it + 1, inner + 1
        elif self._finishing == "epoch":
            epoch, inner = epoch + 1, 0
        return {"epoch": epoch, "iter": it, "inner_iter": inner}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self._epoch = int(state["epoch"])
        self._iter = int(state["iter"])
        self._inner_iter = int(state.get("inner_iter", 0))


@LOOPS.register_module()
class EpochBasedTrainLoop(_TrainLoop):
    """Train for ``max_epochs`` passes over the data, validating every ``val_interval``.

    ``dynamic_intervals=[(epoch, interval), ...]`` changes the interval from
    the given epochs on.
    """

    def __init__(
        self,
        runner: Any,
        dataloader: DataLoader | Mapping[str, Any],
        max_epochs: int,
        val_begin: int = 1,
        val_interval: int = 1,
        dynamic_intervals: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        super().__init__(runner, dataloader, val_begin, val_interval, dynamic_intervals)
        if not isinstance(max_epochs, int) or max_epochs <= 0:
            raise ValueError(f"train_cfg.max_epochs must be a positive int, got {max_epochs!r}")
        self._max_epochs = max_epochs
        self._max_iters = max_epochs * len(self.dataloader)

    @property
    def max_epochs(self) -> int:
        return self._max_epochs

    @property
    def max_iters(self) -> int:
        return self._max_iters

    def run(self) -> Any:
        """Train to ``max_epochs``; return the model."""
        runner = self._runner
        runner.call_hook("before_train")
        while self._epoch < self._max_epochs and not self.stop_training:
            self.run_epoch()
            self._update_val_interval(self._epoch)
            if (
                runner.val_loop is not None
                and self._epoch >= self.val_begin
                and (self._epoch % self.val_interval == 0 or self._epoch == self._max_epochs)
            ):
                runner.val_loop.run()
        runner.call_hook("after_train")
        return runner.model

    def run_epoch(self) -> None:
        """One pass over the data (the rest of it, when resuming mid-epoch)."""
        runner = self._runner
        runner.call_hook("before_train_epoch")
        runner.model.train()
        skip = self._inner_iter
        replay = 0 if _start_at(self.dataloader, skip) else skip
        if replay:
            warnings.warn(
                "the train sampler cannot start mid-epoch; replaying batches to resume",
                stacklevel=2,
            )
        for batch_idx, data_batch in enumerate(self.dataloader, start=skip - replay):
            if batch_idx < skip:
                continue
            self.run_iter(batch_idx, data_batch)
            if self.stop_training:
                break
        self._finishing = "epoch"
        runner.call_hook("after_train_epoch")
        self._finishing = ""
        self._epoch += 1
        self._inner_iter = 0


class _EndlessIterator:
    """Iterate a dataloader forever, starting a new epoch of it when one ends.

    The first pass may start ``start_batches`` into the epoch (resume).
    """

    def __init__(self, dataloader: DataLoader, epoch: int = 0, start_batches: int = 0) -> None:
        self.dataloader = dataloader
        self.epoch = epoch
        self._set_epoch()
        self.skipped = _start_at(dataloader, start_batches)
        self._it: Iterator[Any] = iter(dataloader)

    def _set_epoch(self) -> None:
        sampler, _ = index_sampler(self.dataloader)
        set_epoch = getattr(sampler, "set_epoch", None)
        if callable(set_epoch):
            set_epoch(self.epoch)

    def __next__(self) -> Any:
        try:
            return next(self._it)
        except StopIteration:
            self.epoch += 1
            self._set_epoch()
            self._it = iter(self.dataloader)
            return next(self._it)


@LOOPS.register_module()
class IterBasedTrainLoop(_TrainLoop):
    """Train for ``max_iters`` iterations, validating every ``val_interval`` iterations."""

    by_epoch = False

    def __init__(
        self,
        runner: Any,
        dataloader: DataLoader | Mapping[str, Any],
        max_iters: int,
        val_begin: int = 1,
        val_interval: int = 1000,
        dynamic_intervals: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        super().__init__(runner, dataloader, val_begin, val_interval, dynamic_intervals)
        if not isinstance(max_iters, int) or max_iters <= 0:
            raise ValueError(f"train_cfg.max_iters must be a positive int, got {max_iters!r}")
        self._max_iters = max_iters
        try:
            self._epoch_length: int | None = len(self.dataloader)
        except TypeError:
            self._epoch_length = None

    @property
    def max_epochs(self) -> int:
        return 1

    @property
    def max_iters(self) -> int:
        return self._max_iters

    def run(self) -> Any:
        """Train to ``max_iters``; return the model."""
        runner = self._runner
        runner.call_hook("before_train")
        runner.call_hook("before_train_epoch")
        iterator = self._resume_iterator()
        runner.model.train()  # once, and again after each validation (it walks every module)
        while self._iter < self._max_iters and not self.stop_training:
            data_batch = next(iterator)
            self.run_iter(self._inner_iter, data_batch)
            self._update_val_interval(self._iter)
            if (
                runner.val_loop is not None
                and self._iter >= self.val_begin
                and (self._iter % self.val_interval == 0 or self._iter == self._max_iters)
            ):
                runner.val_loop.run()
                runner.model.train()
        runner.call_hook("after_train_epoch")
        runner.call_hook("after_train")
        return runner.model

    def _resume_iterator(self) -> _EndlessIterator:
        """An endless iterator positioned after the ``iter`` batches already trained on."""
        from ..dataset import InfiniteSampler

        sampler, _ = index_sampler(self.dataloader)
        if self._epoch_length and not isinstance(sampler, InfiniteSampler):
            loader_epoch, within = divmod(self._iter, self._epoch_length)
        else:
            loader_epoch, within = 0, self._iter
        iterator = _EndlessIterator(self.dataloader, loader_epoch, within)
        if within and not iterator.skipped:
            warnings.warn("the train sampler cannot skip ahead; replaying batches", stacklevel=2)
            for _ in range(within):
                next(iterator)
        return iterator
