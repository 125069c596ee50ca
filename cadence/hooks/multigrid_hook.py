"""Apply a multigrid schedule: reshape the training data and set the LR each epoch."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..dataset.multigrid import (
    DEFAULT_LONG_CYCLE_FACTORS,
    DEFAULT_SHORT_CYCLE_FACTORS,
    MultigridSchedule,
    MultigridStage,
    epoch_batches,
    multigrid_dataloader,
)
from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def _param_groups(wrapper: Any) -> list[dict[str, Any]]:
    """The real parameter groups behind an optimizer wrapper (or a dict of them)."""
    wrappers = getattr(wrapper, "optim_wrappers", None)
    if isinstance(wrappers, Mapping):
        return [g for w in wrappers.values() for g in _param_groups(w)]
    optimizer = getattr(wrapper, "optimizer", wrapper)
    return list(optimizer.param_groups)


def _has_schedulers(schedulers: Any) -> bool:
    if isinstance(schedulers, Mapping):
        return any(_has_schedulers(v) for v in schedulers.values())
    return bool(schedulers)


def _index_sampler(loader: Any) -> tuple[Any, int | None]:
    """The sampler that yields ``loader``'s indices (inside its batch sampler when it has
    one) and the batch size."""
    if loader.batch_size is not None:
        return loader.sampler, loader.batch_size
    batch_sampler = loader.batch_sampler
    return getattr(batch_sampler, "sampler", None), getattr(batch_sampler, "batch_size", None)


@HOOKS.register_module()
class MultigridHook(Hook):
    """Train with a multigrid schedule (:mod:`cadence.dataset.multigrid`).

    ``train_cfg.max_epochs`` and ``milestones``/``gamma`` (or ``lrs``) describe the
    original, single-shape schedule; the hook turns them into a
    :class:`~cadence.dataset.multigrid.MultigridSchedule`, logs its table and
    lengthens the train loop to the schedule's ``max_epochs`` (original epochs
    times ``epoch_factor``). Before each epoch whose stage differs from the
    current one it calls ``dataset.set_multigrid_shape(frames, crop_size)`` (see
    :class:`~cadence.dataset.multigrid.MultigridDataset`) and replaces
    ``runner.train_loop.dataloader`` by a loader like the configured one (same
    dataset, sampler object, workers, collate) with the stage's batch size, or a
    :class:`~cadence.dataset.multigrid.ShortCycleBatchSampler` with short
    cycles. The sampler object is kept, so its seed and epoch carry on.

    Learning rate: with ``set_lr=True`` the hook owns it. Each epoch it sets every
    parameter group's ``lr`` to its base value (the optimizer's LR when training
    starts) times :meth:`MultigridSchedule.lr_at`; configure no ``param_scheduler``
    then (an error says so). With ``set_lr=False`` the LR is left to the
    configured schedulers (which then count epochs of the multigrid run).

    Resume: the position is the loop's epoch; the hook's state (base LRs and the
    schedule it ran) is saved in checkpoints, and a resumed run rebuilds the loader
    of its epoch's stage. A run resumed mid-epoch starts at the next unseen batch,
    short cycles included (:meth:`ShortCycleBatchSampler.set_start_batch`).

    Args:
        milestones, gamma, lrs, epoch_factor, long_cycle_factors,
            short_cycle_factors, short_cycle: see ``MultigridSchedule``.
        base_frames, base_crop_size: the dataset's base clip length and crop size.
        base_batch_size: default: the train dataloader's batch size.
        max_epochs: the original schedule's length; default ``train_cfg.max_epochs``.
        set_lr: set the learning rate from the schedule each epoch.
    """

    priority = "HIGHEST"  # reshape before other hooks read the loop's length or loader

    def __init__(
        self,
        milestones: Sequence[int],
        base_frames: int,
        base_crop_size: int,
        base_batch_size: int | None = None,
        max_epochs: int | None = None,
        gamma: float = 0.1,
        lrs: Sequence[float] | None = None,
        epoch_factor: float = 1.5,
        long_cycle_factors: Sequence[Sequence[float]] = DEFAULT_LONG_CYCLE_FACTORS,
        short_cycle_factors: Sequence[float] = DEFAULT_SHORT_CYCLE_FACTORS,
        short_cycle: bool = True,
        set_lr: bool = True,
    ) -> None:
        self.schedule_args: dict[str, Any] = dict(
            milestones=list(milestones), base_frames=base_frames, base_crop_size=base_crop_size,
            gamma=gamma, lrs=lrs, epoch_factor=epoch_factor,
            long_cycle_factors=[tuple(f) for f in long_cycle_factors],
            short_cycle_factors=list(short_cycle_factors), short_cycle=short_cycle,
            owner="MultigridHook",
        )  # fmt: skip
        self.base_batch_size = base_batch_size
        self.max_epochs = max_epochs
        # check the arguments now (a config error), with stand-ins for what the run tells
        last = max(self.schedule_args["milestones"], default=0)
        MultigridSchedule(
            base_batch_size=1 if base_batch_size is None else base_batch_size,
            max_epochs=100 * (last + 1) if max_epochs is None else max_epochs,
            **self.schedule_args,
        )
        self.set_lr = bool(set_lr)
        self.schedule: MultigridSchedule | None = None
        self._template: Any = None
        self._sampler: Any = None
        self._drop_last = False
        self._stage: MultigridStage | None = None
        self._base_lrs: list[float] | None = None
        self._saved_summary: Any = None

    # ------------------------------------------------------------- stages
    def before_train(self, runner: RunnerProtocol) -> None:
        """Build the schedule from the configured loader, log it, set the loop's length."""
        loop: Any = runner.train_loop  # any epoch-based loop with set_length (checked here)
        if not getattr(loop, "by_epoch", True):
            raise ValueError(
                "MultigridHook needs an epoch-based train loop (train_cfg.max_epochs), got "
                f"{type(loop).__name__}"
            )
        if not callable(getattr(loop, "set_length", None)):
            raise TypeError(
                f"MultigridHook: the train loop {type(loop).__name__} has no "
                "set_length(max_epochs, max_iters) to lengthen it to the schedule"
            )
        if self._template is None:
            self._template = loop.dataloader
        template = self._template
        dataset = template.dataset
        if not callable(getattr(dataset, "set_multigrid_shape", None)):
            raise TypeError(
                f"MultigridHook: the training dataset {type(dataset).__name__} does not "
                "implement set_multigrid_shape(frames: int, crop_size: int) (the "
                "cadence.dataset.multigrid.MultigridDataset protocol)"
            )
        sampler, batch_size = _index_sampler(template)
        if sampler is None or batch_size is None:
            raise ValueError(
                "MultigridHook: cannot find the sampler and batch size of the train dataloader "
                f"(batch sampler {type(template.batch_sampler).__name__}); configure "
                "train_dataloader with batch_size and a sampler"
            )
        self._sampler = sampler
        batch_sampler = template.batch_sampler
        self._drop_last = bool(getattr(batch_sampler, "drop_last", template.drop_last))
        if self.max_epochs is None:  # the configured length, before the hook changes it
            self.max_epochs = loop.max_epochs
        self.schedule = MultigridSchedule(
            base_batch_size=self.base_batch_size or batch_size, max_epochs=self.max_epochs,
            **self.schedule_args,
        )  # fmt: skip
        runner.logger.info(self.schedule.table())
        if self._saved_summary is not None and self._saved_summary != self.schedule.summary():
            warnings.warn(
                "MultigridHook: the checkpoint was trained with a different multigrid schedule; "
                "continuing with the configured one",
                stacklevel=2,
            )
        samples = len(sampler)
        max_iters = sum(
            epoch_batches(self.schedule.stage_at(e), samples, self._drop_last)
            for e in range(self.schedule.max_epochs)
        )
        loop.set_length(max_epochs=self.schedule.max_epochs, max_iters=max_iters)
        self._stage = None
        if self.set_lr:
            self._check_lr_owner(runner)

    def _check_lr_owner(self, runner: RunnerProtocol) -> None:
        if _has_schedulers(runner.param_schedulers):
            raise ValueError(
                "MultigridHook(set_lr=True) sets the learning rate from its schedule; remove "
                "param_scheduler from the config, or set set_lr=False to keep the schedulers"
            )
        groups = _param_groups(runner.optim_wrapper)
        if self._base_lrs is None:
            self._base_lrs = [float(g["lr"]) for g in groups]
        elif len(self._base_lrs) != len(groups):
            raise ValueError(
                f"MultigridHook: the checkpoint has {len(self._base_lrs)} parameter groups' "
                f"base LRs but the optimizer has {len(groups)} groups"
            )

    def before_train_epoch(self, runner: RunnerProtocol) -> None:
        """Switch to the epoch's stage (new loader and dataset shape) and set its LR."""
        assert self.schedule is not None, "MultigridHook.before_train did not run"
        epoch = runner.epoch
        stage = self.schedule.stage_at(epoch)
        if self._stage is None or stage.cycle != self._stage.cycle:
            self._apply(runner, stage)
        self._stage = stage
        if self.set_lr:
            factor = self.schedule.lr_at(epoch)
            assert self._base_lrs is not None
            for group, base in zip(_param_groups(runner.optim_wrapper), self._base_lrs):
                group["lr"] = base * factor

    def _apply(self, runner: RunnerProtocol, stage: MultigridStage) -> None:
        shape = stage.shape
        self._template.dataset.set_multigrid_shape(shape.frames, shape.crop_size)
        loader = multigrid_dataloader(self._template, self._sampler, stage, self._drop_last)
        runner.train_loop.dataloader = loader
        cycle = ", ".join(f"{c.batch_size}x{c.crop_size}" for c in stage.cycle)
        runner.logger.info(
            f"Multigrid: epochs {stage.begin}-{stage.end}: batch {shape.batch_size}, "
            f"{shape.frames} frames, crop {shape.crop_size}"
            + (f", short cycle (batch x crop) {cycle}" if len(stage.cycle) > 1 else "")
            + f"; {len(loader)} iterations per epoch"
        )

    # -------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """Base LRs and the schedule run so far (the position is the loop's epoch)."""
        return {
            "base_lrs": self._base_lrs,
            "schedule": self.schedule.summary() if self.schedule is not None else None,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the base LRs; the schedule is checked against the config at train start."""
        lrs = state.get("base_lrs")
        self._base_lrs = [float(v) for v in lrs] if lrs is not None else None
        summary = state.get("schedule")
        self._saved_summary = (
            [tuple(_plain(x) for x in row) for row in summary] if summary else None
        )


def _plain(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(MultigridHook)
