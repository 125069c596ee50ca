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

from torch.utils.data import DataLoader

from ..dataset.loader_state import dataloader_state_dict, index_sampler, load_dataloader_state_dict
from ..registry import LOOPS
from ..registry.constraints import NATURAL, POSITIVE_INT, Rule, constrain
from ..utils.heartbeat import DATA, FORWARD, HOOK
from .base_loop import BaseLoop
from .data_position import (
    DataPosition,
    EndlessIterator,
    Layout,
    batches_left,
    continues_by_samples,
    draws_once,
    iterate,
    loader_layout,
    replay_message,
    saved_layout,
    saved_position,
    start_at,
    warn_if_changed,
)
from .rng import preserved_rng

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


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


class _Finishing(enum.Enum):
    """Which after-hooks of the training loop are running (what a checkpoint taken there
    counts as done)."""

    NOTHING = enum.auto()  # between steps: the position is as it reads
    ITER = enum.auto()  # ``after_train_iter``: the current step is done
    EPOCH = enum.auto()  # ``after_train_epoch``: the current epoch is done


#: how often to validate, in epochs or iterations
VAL_INTERVAL = Rule(POSITIVE_INT.test, "an int >= 1 (validate every N epochs or iterations)")


@constrain(val_begin=NATURAL, val_interval=VAL_INTERVAL)
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
        self._loaded: Mapping[str, Any] | None = None  # loaded, not yet continued from
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
        return mid_epoch or (first and self._iter > 0 and draws_once(self.dataloader))

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
        beat.phase, beat.stage = HOOK, stage  # and where in the step (attribute writes)
        try:
            for fn in hooks[stage]:
                beat.hook = fn
                fn(runner, batch_idx, data_batch)
            fn = None
            wrapper = runner.optim_wrapper
            model: Any = runner.model  # a BaseModel, or a strategy's wrapper forwarding train_step
            beat.phase = FORWARD  # the optimizer wrapper marks the backward pass and the step
            outputs = model.train_step(data_batch, optim_wrapper=wrapper)
            extra = wrapper.pop_log_vars()
            if extra:
                outputs = {**outputs, **extra}
            self._finishing, stage = _Finishing.ITER, "after_train_iter"
            beat.phase, beat.stage = HOOK, stage
            for fn in hooks[stage]:
                beat.hook = fn
                fn(runner, batch_idx, data_batch, outputs)
        except Exception as exc:
            if fn is not None:
                runner.blame_hook(exc, stage, fn)
            raise
        self._finishing = _Finishing.NOTHING
        self._iter += 1
        self._inner_iter += 1
        beat.steps += 1
        beat.phase = DATA

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
            "data": self._data_state(epoch, inner),
        }

    @property
    def _layout(self) -> Layout:
        """The layout of the dataloader now (a hook may replace the dataloader)."""
        return loader_layout(self.dataloader)

    def _data_state(self, epoch: int, inner: int) -> dict[str, Any]:
        loaded = self._loaded
        if loaded is not None and "data" in loaded:  # not continued from yet: as loaded
            return dict(loaded["data"])
        return self._data_position(epoch, inner).state_dict(self._layout)

    def _data_position(self, epoch: int, inner: int) -> DataPosition:
        """The data position at ``epoch``, ``inner`` batches into it (module docstring)."""
        raise NotImplementedError

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from ``state``; parts that older checkpoints lack keep their defaults.

        A state saved with another world size or per-rank batch size continues the
        data from the samples consumed, with a warning (:mod:`.data_position`).
        """
        self._epoch = int(state["epoch"])
        self._iter = int(state["iter"])
        self._inner_iter = int(state.get("inner_iter", 0))
        self._val_pending = bool(state.get("val_pending", False))
        if "dataloader" in state:
            load_dataloader_state_dict(self.dataloader, state["dataloader"])
        self._loaded = state

    def _continue_data(self) -> None:
        """Continue the data from the loaded state, with the dataloader about to be iterated
        (``before_train_epoch`` hooks may have replaced the one the state was loaded into)."""
        state, self._loaded = self._loaded, None
        if state is None:
            return
        saved = saved_layout(state, self._layout)
        self._resume_data(state, saved)
        warn_if_changed(saved, self.dataloader, self._runner)

    def _resume_data(self, state: Mapping[str, Any], saved: Layout) -> None:
        """Set where the data continues from the loaded ``state`` (saved by ``saved``)."""
        raise NotImplementedError


@LOOPS.register_module()
@constrain(max_epochs=POSITIVE_INT)
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
        # the current pass began after ``_origin`` samples of the epoch, at batch ``_first``
        self._origin = self._first = 0

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

    def _data_position(self, epoch: int, inner: int) -> DataPosition:
        if inner == 0:
            return DataPosition(epoch, 0)
        step = self._layout.global_batch or 0
        return DataPosition(epoch, self._origin + (inner - self._first) * step)

    def _resume_data(self, state: Mapping[str, Any], saved: Layout) -> None:
        """The epoch continues from the samples consumed; with another layout the batch
        count becomes this layout's, so that the epoch still ends at ``len(dataloader)``."""
        position = saved_position(state)
        consumed = (
            position.samples if position is not None
            else self._inner_iter * (saved.global_batch or 0)
        )  # fmt: skip
        self._origin, self._first = consumed, self._inner_iter
        if saved != self._layout and consumed and continues_by_samples(self.dataloader):
            left = batches_left(self.dataloader, consumed)
            if left is not None:
                self._inner_iter = self._first = max(len(self.dataloader) - left, 0)

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
        self._continue_data()
        skip = self._inner_iter
        consumed = self._data_position(self._epoch, skip).samples
        replay = 0 if start_at(self.dataloader, skip, consumed) else skip
        if replay:
            warnings.warn(replay_message(self.dataloader, replay), UserWarning, stacklevel=2)
        mid_epoch = (skip > 0 or consumed > 0) and not replay
        batches = iterate(self.dataloader, self._keep_rng(mid_epoch=mid_epoch))
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
        self._inner_iter = self._origin = self._first = 0


#: ``IterBasedTrainLoop.run_iter``'s marker of a call with the batch alone.
_NO_BATCH: Any = object()


@LOOPS.register_module()
@constrain(max_iters=POSITIVE_INT)
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
        self._resumed: DataPosition | None = None  # where a resumed run's data continues
        self._endless: EndlessIterator | None = None  # the batches, once training runs

    @property
    def max_epochs(self) -> int:
        return 1

    def run_iter(self, batch_idx: Any, data_batch: Any = _NO_BATCH) -> None:
        """One optimization step and its hooks; ``run_iter(data_batch)`` as mmengine's
        iteration loop is called (the batch index is then the loop's own count)."""
        if data_batch is _NO_BATCH:
            batch_idx, data_batch = self._inner_iter, batch_idx
        super().run_iter(batch_idx, data_batch)

    @property
    def dataloader_iterator(self) -> EndlessIterator:
        """The endless batches (``next(loop.dataloader_iterator)``, as a loop that overrides
        ``run`` takes them in mmengine), positioned after the data already trained on."""
        if self._endless is None:
            self._resume_iterator()
        assert self._endless is not None
        return self._endless

    def set_length(self, max_epochs: int | None = None, max_iters: int | None = None) -> None:
        """Train for ``max_iters`` iterations (the loop has no epochs to set)."""
        if max_epochs is not None:
            raise ValueError("IterBasedTrainLoop counts iterations: set max_iters, not max_epochs")
        if max_iters is not None:
            self._max_iters = _positive_int("max_iters", max_iters)

    def _val_due_after(self, epoch: int, it: int) -> bool:
        return self._finishing is _Finishing.ITER and self._val_due(it, self._max_iters)

    def _data_position(self, epoch: int, inner: int) -> DataPosition:
        if self._endless is not None:
            return self._endless.position
        return self._resumed or self._counted_position(self._layout)[0]

    def _counted_position(self, layout: Layout) -> tuple[DataPosition, int]:
        """The data position reached by ``iter`` steps of ``layout``, and the batches into
        its data epoch (what checkpoints without a recorded position resume from)."""
        from ..dataset import InfiniteSampler

        sampler, _ = index_sampler(self.dataloader)
        if self._epoch_length and not isinstance(sampler, InfiniteSampler):
            epoch, within = divmod(self._iter, self._epoch_length)
        else:
            epoch, within = 0, self._iter
        return DataPosition(epoch, within * (layout.global_batch or 0)), within

    def _resume_data(self, state: Mapping[str, Any], saved: Layout) -> None:
        """The data continues from the recorded position; a batch sampler that sizes its
        own batches continues from the iteration count (as do older checkpoints)."""
        position = saved_position(state)
        if not self._layout.global_batch:
            self._resumed = None
        elif position is None:
            self._resumed = self._counted_position(saved)[0] if saved != self._layout else None
        else:
            self._resumed = position

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
        """Endless batches, positioned after the data already trained on."""
        self._continue_data()
        position, within = self._counted_position(self._layout)
        step = self._layout.global_batch
        if self._resumed is not None and step:
            position, within = self._resumed, self._resumed.samples // step
        keep_rng = self._keep_rng(mid_epoch=within > 0 or position.samples > 0)
        endless = self._endless = EndlessIterator(self.dataloader, position, within, keep_rng)
        batches = iter(endless)
        if within and not endless.skipped:
            warnings.warn(replay_message(self.dataloader, within), UserWarning, stacklevel=2)
            for _ in range(within):
                next(batches)
        return batches
