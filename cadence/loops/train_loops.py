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
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from torch.utils.data import DataLoader

from ..dataset.loader_state import index_sampler
from ..registry import LOOPS
from ..registry.constraints import POSITIVE_INT, constrain
from .data_position import (
    BaseSeedDraw,
    DataPosition,
    EndlessIterator,
    Layout,
    batches_left,
    continues_by_samples,
    iterate,
    replay_message,
    saved_position,
    start_at,
)
from .train_loop_base import _Finishing, _positive_int, _TrainLoop

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


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
        # mmengine's loop builds its data iterator here, which draws the DataLoader's base
        # seed now, before the model's weights are initialised: the same draw is made now
        # (no workers start yet), and a run that starts at the beginning builds its
        # iterator with it, so its weights and batches are those of mmengine's run.
        self._seed_draw = BaseSeedDraw.of(self.dataloader)

    @property
    def max_epochs(self) -> int:
        return 1

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
        draw, self._seed_draw = self._seed_draw, None
        if draw is not None and position == DataPosition(0, 0) and not within:
            with draw.replayed():  # a run from the beginning: the base seed drawn above
                self._endless = EndlessIterator(self.dataloader, position)
            return iter(self._endless)
        keep_rng = self._keep_rng(mid_epoch=within > 0 or position.samples > 0)
        endless = self._endless = EndlessIterator(self.dataloader, position, within, keep_rng)
        batches = iter(endless)
        if within and not endless.skipped:
            warnings.warn(replay_message(self.dataloader, within), UserWarning, stacklevel=2)
            for _ in range(within):
                next(batches)
        return batches
