"""The training loops' shared part: position, validation schedule, one step and its hooks,
the state a checkpoint keeps and resuming from it (:mod:`.train_loops` has the two loops)."""

from __future__ import annotations

import bisect
import enum
import warnings
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

from torch.utils.data import DataLoader

from ..dataset.loader_state import dataloader_state_dict, load_dataloader_state_dict
from ..registry.constraints import NATURAL, POSITIVE_INT, Rule, constrain
from ..resilience.heartbeat import DATA, FORWARD, HOOK
from .base_loop import BaseLoop
from .data_position import (
    DataPosition,
    Layout,
    draws_once,
    loader_layout,
    saved_layout,
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


#: ``run_iter``'s default: called with the batch alone (mmengine's iteration loop)
NO_BATCH: Any = object()


class _Finishing(enum.Enum):
    """Which after-hooks of the training loop are running (what a checkpoint taken there
    counts as done)."""

    NOTHING = enum.auto()  # between steps: the position is as it reads
    ITER = enum.auto()  # ``after_train_iter``: the current step is done
    EPOCH = enum.auto()  # ``after_train_epoch``: the current epoch is done


_ITER, _NOTHING = _Finishing.ITER, _Finishing.NOTHING  # read every step

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

    if TYPE_CHECKING:

        @property
        def iter(self) -> int: ...

    else:  # read by hooks every step: a getter that runs no Python code
        iter = property(attrgetter("_iter"), doc="Iterations done.")

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
        """Run the validation loop; training's random streams come out as they went in.
        Then the checkpoints taken just before it record that it ran (the runner's
        ``after_validation``), so that a resume from them does not run it again."""
        loop = self._runner.val_loop
        assert loop is not None, "validation is due only when there is a validation loop"
        with preserved_rng():
            loop.run()
        self._runner.after_validation()

    def _keep_rng(self, mid_epoch: bool) -> bool:
        """Whether the iterator built now must not draw (the uninterrupted run did not here)."""
        first, self._iterated = not self._iterated, True
        return mid_epoch or (first and self._iter > 0 and draws_once(self.dataloader))

    def _run_pending_val(self) -> None:
        """Validate first when the checkpoint resumed from was taken just before a validation."""
        if self._val_pending:
            self._val_pending = False
            if self._runner.val_loop is not None:
                self._runner.logger.info(
                    "The validation that followed the checkpoint had not finished: validating first"
                )
                self._validate()

    def run_iter(self, batch_idx: Any, data_batch: Any = NO_BATCH) -> None:
        """One optimization step and its hooks; ``run_iter(data_batch)`` as mmengine's
        iteration loop is called (the batch index is then the loop's own count).

        While a hang watchdog watches, the step also marks where it is in the
        heartbeat (:meth:`_run_iter_marked`); otherwise it runs the same calls unmarked.
        """
        if data_batch is NO_BATCH:
            batch_idx, data_batch = self._inner_iter, batch_idx
        if self._heartbeat.watchers:
            self._run_iter_marked(batch_idx, data_batch)
            return
        runner = self._runner
        hooks = runner.stage_calls  # called here rather than through call_hook: per step
        stage, fn = "before_train_iter", None
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
            self._finishing, stage = _ITER, "after_train_iter"
            for fn in hooks[stage]:
                fn(runner, batch_idx, data_batch, outputs)
        except Exception as exc:
            if fn is not None:
                runner.blame_hook(exc, stage, fn)
            raise
        self._finishing = _NOTHING
        self._iter += 1
        self._inner_iter += 1

    def _run_iter_marked(self, batch_idx: Any, data_batch: Any) -> None:
        """:meth:`run_iter`'s step, marking in the heartbeat where it is (the same calls)."""
        runner = self._runner
        hooks = runner.stage_calls
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
            model: Any = runner.model
            beat.phase = FORWARD  # the optimizer wrapper marks the backward pass and the step
            outputs = model.train_step(data_batch, optim_wrapper=wrapper)
            extra = wrapper.pop_log_vars()
            if extra:
                outputs = {**outputs, **extra}
            self._finishing, stage = _ITER, "after_train_iter"
            beat.phase, beat.stage = HOOK, stage
            for fn in hooks[stage]:
                beat.hook = fn
                fn(runner, batch_idx, data_batch, outputs)
        except Exception as exc:
            if fn is not None:
                runner.blame_hook(exc, stage, fn)
            raise
        self._finishing = _NOTHING
        self._iter += 1
        self._inner_iter += 1
        beat.steps += 1
        beat.phase = DATA

    def _val_due_after(self, epoch: int, it: int) -> bool:
        """Whether a validation follows the step whose after-hooks are running now."""
        raise NotImplementedError

    def _done(self) -> tuple[int, int, int]:
        """Epoch, iteration and batches into the epoch, counting a step or epoch whose
        after-hooks are running as done."""
        epoch, it, inner = self._epoch, self._iter, self._inner_iter
        if self._finishing is _Finishing.ITER:
            it, inner = it + 1, inner + 1
        elif self._finishing is _Finishing.EPOCH:
            epoch, inner = epoch + 1, 0
        return epoch, it, inner

    @property
    def val_pending(self) -> bool:
        """Whether the run resumed from a checkpoint taken just before a validation that
        it has not run yet (it runs it first)."""
        return self._val_pending

    @property
    def val_follows(self) -> bool:
        """Whether a validation follows the after-hooks running now: a checkpoint taken now
        precedes it (``val_pending`` in its state)."""
        if self._finishing is _Finishing.NOTHING:
            return False
        epoch, it, _ = self._done()
        return self._val_due_after(epoch, it)

    def state_dict(self) -> dict[str, Any]:
        """Position to resume from, the dataloader's state, whether a validation is due
        and whether training stops there.

        Inside an after-hook the current step counts as done; a checkpoint taken
        there precedes the validation that may follow the step (``val_pending``).
        """
        epoch, it, inner = self._done()
        return {
            "epoch": epoch,
            "iter": it,
            "inner_iter": inner,
            "val_pending": self.val_follows,
            "stop_training": self.stop_training,
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
        """Continue from ``state``; parts that older checkpoints lack keep their defaults
        (``stop_training``: set after a validation that stopped the run, e.g. by early
        stopping, in the state kept after it).

        A state saved with another world size or per-rank batch size continues the
        data from the samples consumed, with a warning (:mod:`.data_position`).
        """
        self._epoch = int(state["epoch"])
        self._iter = int(state["iter"])
        self._inner_iter = int(state.get("inner_iter", 0))
        self._val_pending = bool(state.get("val_pending", False))
        self.stop_training = bool(state.get("stop_training", False))
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
