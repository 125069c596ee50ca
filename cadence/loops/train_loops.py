"""Training loops: by epoch and by iteration.

Both resume exactly from a checkpoint taken anywhere in an epoch: the
sampler starts at the next unseen sample (nothing is loaded twice), the
iterator built to resume draws nothing from the global random streams (the
uninterrupted run drew when its epoch began), a validation that was due right
after the checkpoint runs first, and validation during training leaves the
random streams as it found them (so a checkpoint taken before it resumes into
the same draws as the run that went on through it).
"""

from __future__ import annotations

import bisect
import enum
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch.utils.data import DataLoader

from ..dataset.loader_state import (
    dataloader_state_dict,
    index_sampler,
    load_dataloader_state_dict,
)
from ..registry import LOOPS
from .base_loop import BaseLoop
from .rng import preserved_rng

if TYPE_CHECKING:
    from ..runner.protocol import RunnerProtocol


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


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"train_cfg.{name} must be a positive int, got {value!r}")
    return value


def _start_at(dataloader: DataLoader, batches: int) -> bool:
    """Make the next pass over ``dataloader`` skip ``batches`` batches without loading them.

    A batch sampler that knows its own batches (``set_start_batch``, e.g. one
    whose batch size changes per iteration) is asked first; otherwise the index
    sampler starts ``batches * batch_size`` samples in.
    """
    if batches <= 0:
        return True
    set_start_batch = getattr(getattr(dataloader, "batch_sampler", None), "set_start_batch", None)
    if callable(set_start_batch):
        return bool(set_start_batch(batches))
    sampler, batch_size = index_sampler(dataloader)
    set_start = getattr(sampler, "set_start_index", None)
    if callable(set_start) and batch_size is not None:
        set_start(batches * batch_size)
        return True
    return False


def _draws_once(dataloader: Any) -> bool:
    """Whether only the first ``iter()`` builds a new iterator (persistent workers)."""
    return bool(getattr(dataloader, "persistent_workers", False)) and bool(
        getattr(dataloader, "num_workers", 0)
    )


def _iterate(dataloader: DataLoader, keep_rng: bool) -> Iterator[Any]:
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


class _Finishing(enum.Enum):
    """Which after-hooks of the training loop are running (what a checkpoint taken there
    counts as done)."""

    NOTHING = enum.auto()  # between steps: the position is as it reads
    ITER = enum.auto()  # ``after_train_iter``: the current step is done
    EPOCH = enum.auto()  # ``after_train_epoch``: the current epoch is done


class _TrainLoop(BaseLoop):
    """Shared parts of the two training loops."""

    by_epoch = True

    def __init__(
        self,
        runner: RunnerProtocol,
        dataloader: DataLoader | Mapping[str, Any],
        val_begin: int,
        val_interval: int,
        dynamic_intervals: Sequence[tuple[int, int]] | None,
    ) -> None:
        super().__init__(runner, dataloader)
        self._epoch = 0
        self._iter = 0
        self._inner_iter = 0  # batches finished in the current epoch
        self._max_iters = 0  # set by the subclass (set_length)
        self._finishing = _Finishing.NOTHING  # which after-hooks are running
        self._val_pending = False  # resumed from a checkpoint taken just before a validation
        self._iterated = False  # whether this process has built an iterator over the data
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

    @property
    def max_iters(self) -> int:
        return self._max_iters

    def set_length(self, max_epochs: int | None = None, max_iters: int | None = None) -> None:
        """Change how long the loop trains (a hook may, in ``before_train``)."""
        raise NotImplementedError

    def _before_train(self) -> None:
        """Call ``before_train``; when a hook changed the loop's length there, recount the
        optimizer wrapper's iterations (the runner counted them with the configured length)."""
        runner = self._runner
        self._heartbeat.start("train", first=self._iter + 1)  # for the hang watchdog
        length = self.max_iters
        runner.call_hook("before_train")
        if self.max_iters == length:
            return
        wrapper = runner.optim_wrapper  # a stand-in wrapper may not count
        recount = getattr(wrapper, "initialize_count_status", None)
        if callable(recount):
            with warnings.catch_warnings():  # the runner's count already warned the same
                warnings.simplefilter("ignore")
                recount(runner.model, self._iter, self.max_iters)

    def _interval_at(self, position: int) -> int:
        return self._intervals[bisect.bisect(self._milestones, position) - 1]

    def _update_val_interval(self, position: int) -> None:
        self.val_interval = self._interval_at(position)

    def _val_due(self, position: int, last: int) -> bool:
        """Whether the run validates once it has reached ``position`` (an epoch or iteration)."""
        if self._runner.val_loop is None or position < self.val_begin:
            return False
        return position % self._interval_at(position) == 0 or position == last

    def _next_val(self, after: int, last: int) -> int:
        """The first position after ``after`` where :meth:`_val_due` holds; ``last + 1`` if none.

        Computed once per validation, so the loop compares one integer per step.
        """
        if self._runner.val_loop is None or last <= after or last < self.val_begin:
            return last + 1
        milestones, intervals = self._milestones, self._intervals
        position = max(after + 1, self.val_begin)
        while position < last:
            segment = bisect.bisect(milestones, position) - 1
            interval = intervals[segment]
            due = -(-position // interval) * interval  # first multiple >= position
            if segment + 1 == len(milestones) or due < milestones[segment + 1]:
                return min(due, last)
            position = milestones[segment + 1]
        return last

    def _validate(self) -> None:
        """Run the validation loop; training's random streams come out as they went in."""
        loop = self._runner.val_loop
        assert loop is not None, "validation is due only when there is a validation loop"
        with preserved_rng():
            loop.run()

    def _keep_rng(self, mid_epoch: bool) -> bool:
        """Whether the iterator built now must not draw (the uninterrupted run did not here)."""
        first, self._iterated = not self._iterated, True
        return mid_epoch or (first and self._iter > 0 and _draws_once(self.dataloader))

    def _run_pending_val(self) -> None:
        """Validate first when the checkpoint resumed from was taken just before a validation."""
        if self._val_pending:
            self._val_pending = False
            if self._runner.val_loop is not None:
                self._validate()

    def run_iter(self, batch_idx: int, data_batch: Any) -> None:
        """One optimization step and its hooks."""
        runner = self._runner
        hooks = runner.stage_calls  # called here rather than through call_hook: per step
        stage, fn = "before_train_iter", None
        beat = self._heartbeat  # what the hang watchdog reads: +1 now, +1 when done
        beat.steps += 1
        try:
            for fn in hooks[stage]:
                fn(runner, batch_idx, data_batch)
            fn = None
            wrapper = runner.optim_wrapper
            model: Any = runner.model  # a BaseModel, or a strategy's wrapper forwarding train_step
            outputs = model.train_step(data_batch, optim_wrapper=wrapper)
            extra = wrapper.pop_log_vars()
            if extra:
                outputs = {**outputs, **extra}
            self._finishing, stage = _Finishing.ITER, "after_train_iter"
            for fn in hooks[stage]:
                fn(runner, batch_idx, data_batch, outputs)
        except Exception as exc:
            if fn is not None:
                runner.blame_hook(exc, stage, fn)
            raise
        self._finishing = _Finishing.NOTHING
        self._iter += 1
        self._inner_iter += 1
        beat.steps += 1

    def _val_due_after(self, epoch: int, it: int) -> bool:
        """Whether a validation follows the step whose after-hooks are running now."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """Position to resume from, the dataloader's state and whether a validation is due.

        Inside an after-hook the current step counts as done; a checkpoint taken
        there precedes the validation that may follow the step (``val_pending``).
        """
        epoch, it, inner = self._epoch, self._iter, self._inner_iter
        finishing = self._finishing
        if finishing is _Finishing.ITER:
            it, inner = it + 1, inner + 1
        elif finishing is _Finishing.EPOCH:
            epoch, inner = epoch + 1, 0
        pending = finishing is not _Finishing.NOTHING and self._val_due_after(epoch, it)
        return {
            "epoch": epoch,
            "iter": it,
            "inner_iter": inner,
            "val_pending": pending,
            "dataloader": dataloader_state_dict(self.dataloader),
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from ``state``; parts that older checkpoints lack keep their defaults."""
        self._epoch = int(state["epoch"])
        self._iter = int(state["iter"])
        self._inner_iter = int(state.get("inner_iter", 0))
        self._val_pending = bool(state.get("val_pending", False))
        if "dataloader" in state:
            load_dataloader_state_dict(self.dataloader, state["dataloader"])


@LOOPS.register_module()
class EpochBasedTrainLoop(_TrainLoop):
    """Train for ``max_epochs`` passes over the data, validating every ``val_interval``.

    ``dynamic_intervals=[(epoch, interval), ...]`` changes the interval from
    the given epochs on.
    """

    def __init__(
        self,
        runner: RunnerProtocol,
        dataloader: DataLoader | Mapping[str, Any],
        max_epochs: int,
        val_begin: int = 1,
        val_interval: int = 1,
        dynamic_intervals: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        super().__init__(runner, dataloader, val_begin, val_interval, dynamic_intervals)
        self.set_length(max_epochs=max_epochs)

    @property
    def max_epochs(self) -> int:
        return self._max_epochs

    def set_length(self, max_epochs: int | None = None, max_iters: int | None = None) -> None:
        """Train for ``max_epochs`` epochs of ``max_iters`` iterations in all.

        ``max_iters`` defaults to ``max_epochs`` times the dataloader's length;
        give it when epochs differ in length (e.g. a multigrid schedule).
        """
        if max_epochs is not None:
            self._max_epochs = _positive_int("max_epochs", max_epochs)
        if max_iters is not None:
            self._max_iters = _positive_int("max_iters", max_iters)
        elif max_epochs is not None:
            self._max_iters = self._max_epochs * len(self.dataloader)

    def _val_due_after(self, epoch: int, it: int) -> bool:
        return self._finishing is _Finishing.EPOCH and self._val_due(epoch, self._max_epochs)

    def run(self) -> Any:
        """Train to ``max_epochs``; return the model."""
        runner = self._runner
        self._before_train()
        self._run_pending_val()
        while self._epoch < self._max_epochs and not self.stop_training:
            self.run_epoch()
            self._update_val_interval(self._epoch)
            if self._val_due(self._epoch, self._max_epochs):
                self._validate()
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
        batches = _iterate(self.dataloader, self._keep_rng(mid_epoch=skip > 0 and not replay))
        for batch_idx, data_batch in enumerate(batches, start=skip - replay):
            if batch_idx < skip:
                continue
            self.run_iter(batch_idx, data_batch)
            if self.stop_training:
                break
        self._finishing = _Finishing.EPOCH
        runner.call_hook("after_train_epoch")
        self._finishing = _Finishing.NOTHING
        self._epoch += 1
        self._inner_iter = 0


class _EndlessIterator:
    """Iterate a dataloader forever, starting a new epoch of it when one ends.

    The first pass may start ``start_batches`` into the epoch (resume); its
    iterator is built without drawing from torch's RNG when ``keep_rng``.
    """

    def __init__(
        self, dataloader: DataLoader, epoch: int = 0, start_batches: int = 0,
        keep_rng: bool = False,
    ) -> None:  # fmt: skip
        self.dataloader = dataloader
        self.epoch = epoch
        self._set_epoch()
        self.skipped = _start_at(dataloader, start_batches)
        self._it: Iterator[Any] = _iterate(dataloader, keep_rng)

    def _set_epoch(self) -> None:
        sampler, _ = index_sampler(self.dataloader)
        set_epoch = getattr(sampler, "set_epoch", None)
        if callable(set_epoch):
            set_epoch(self.epoch)

    def __iter__(self) -> Iterator[Any]:
        """The batches, epoch after epoch (a generator: cheap per batch)."""
        fresh = False  # the first pass may start at the end of an epoch (resume)
        while True:
            empty = True
            for batch in self._it:
                empty = False
                yield batch
            if empty and fresh:
                raise RuntimeError("the training dataloader yields no batches")
            self.epoch += 1
            self._set_epoch()
            self._it = iter(self.dataloader)
            fresh = True


@LOOPS.register_module()
class IterBasedTrainLoop(_TrainLoop):
    """Train for ``max_iters`` iterations, validating every ``val_interval`` iterations."""

    by_epoch = False

    def __init__(
        self,
        runner: RunnerProtocol,
        dataloader: DataLoader | Mapping[str, Any],
        max_iters: int,
        val_begin: int = 1,
        val_interval: int = 1000,
        dynamic_intervals: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        super().__init__(runner, dataloader, val_begin, val_interval, dynamic_intervals)
        self.set_length(max_iters=max_iters)
        try:
            self._epoch_length: int | None = len(self.dataloader)
        except TypeError:
            self._epoch_length = None

    @property
    def max_epochs(self) -> int:
        return 1

    def set_length(self, max_epochs: int | None = None, max_iters: int | None = None) -> None:
        """Train for ``max_iters`` iterations (the loop has no epochs to set)."""
        if max_epochs is not None:
            raise ValueError("IterBasedTrainLoop counts iterations: set max_iters, not max_epochs")
        if max_iters is not None:
            self._max_iters = _positive_int("max_iters", max_iters)

    def _val_due_after(self, epoch: int, it: int) -> bool:
        return self._finishing is _Finishing.ITER and self._val_due(it, self._max_iters)

    def run(self) -> Any:
        """Train to ``max_iters``; return the model."""
        runner = self._runner
        self._before_train()
        runner.call_hook("before_train_epoch")
        self._run_pending_val()
        batches = self._resume_iterator()
        runner.model.train()  # once, and again after each validation (it walks every module)
        # validation and interval changes happen at known iterations: one comparison per step
        check = self._next_check()
        while self._iter < self._max_iters and not self.stop_training:
            self.run_iter(self._inner_iter, next(batches))
            if self._iter >= check:
                self._update_val_interval(self._iter)
                if self._val_due(self._iter, self._max_iters):
                    self._validate()
                    runner.model.train()
                check = self._next_check()
        runner.call_hook("after_train_epoch")
        runner.call_hook("after_train")
        return runner.model

    def _next_check(self) -> int:
        """The next iteration that validates or starts another validation interval."""
        it = self._iter
        due = self._next_val(it, self._max_iters)
        later = bisect.bisect(self._milestones, it)
        return min(due, self._milestones[later]) if later < len(self._milestones) else due

    def _resume_iterator(self) -> Iterator[Any]:
        """Endless batches, positioned after the ``iter`` batches already trained on."""
        from ..dataset import InfiniteSampler

        sampler, _ = index_sampler(self.dataloader)
        if self._epoch_length and not isinstance(sampler, InfiniteSampler):
            loader_epoch, within = divmod(self._iter, self._epoch_length)
        else:
            loader_epoch, within = 0, self._iter
        keep_rng = self._keep_rng(mid_epoch=within > 0)
        endless = _EndlessIterator(self.dataloader, loader_epoch, within, keep_rng)
        batches = iter(endless)
        if within and not endless.skipped:
            warnings.warn("the train sampler cannot skip ahead; replaying batches", stacklevel=2)
            for _ in range(within):
                next(batches)
        return batches
