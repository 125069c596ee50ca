"""Step the parameter schedulers at the right moments."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..optim.scheduler.resume_policy import stretch
from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def _all(schedulers: Any) -> Iterable[Any]:
    """Every scheduler of ``runner.param_schedulers``: a list, or a dict of lists (one per
    optimizer wrapper of an ``OptimWrapperDict``)."""
    if schedulers is None:
        return []
    if isinstance(schedulers, (list, tuple)):
        return list(schedulers)
    if isinstance(schedulers, dict) and all(
        isinstance(group, (list, tuple)) for group in schedulers.values()
    ):
        return [s for group in schedulers.values() for s in group]
    raise TypeError(
        "runner.param_schedulers should be list of ParamScheduler or a dict containing list "
        f"of ParamScheduler, got {type(schedulers).__name__}"
    )


@HOOKS.register_module()
class ParamSchedulerHook(Hook):
    """Step iteration-based schedulers after each iteration and epoch-based ones after
    each epoch (schedulers that need metrics, like ReduceOnPlateau, just count
    there); after validation, give those the metrics."""

    priority = "LOW"

    def __init__(self) -> None:
        self._saved_length: dict[str, int] | None = None  # of the checkpoint resumed from

    # ------------------------------------------- resuming with another length
    def before_save_checkpoint(self, runner: RunnerProtocol, checkpoint: dict[str, Any]) -> None:
        """Record the training length in ``meta`` (what ``resume_policy`` compares)."""
        meta = checkpoint.setdefault("meta", {})
        meta["train_length"] = {"max_epochs": runner.max_epochs, "max_iters": runner.max_iters}

    def after_load_checkpoint(self, runner: RunnerProtocol, checkpoint: dict[str, Any]) -> None:
        length = checkpoint.get("meta", {}).get("train_length")
        if runner.resuming and isinstance(length, dict):
            self._saved_length = {k: int(v) for k, v in length.items()}

    def before_train(self, runner: RunnerProtocol) -> None:
        """Apply ``train_cfg.resume_policy`` when the run resumed with another length."""
        old, self._saved_length = self._saved_length, None
        new = {"max_epochs": runner.max_epochs, "max_iters": runner.max_iters}
        if old is None or old == new or not runner.param_schedulers:
            return
        policy = runner.train_loop.resume_policy
        planned = f"{old['max_epochs']} epochs / {old['max_iters']} iterations"
        now = f"{new['max_epochs']} epochs / {new['max_iters']} iterations"
        if policy == "keep":
            runner.logger.info(
                f"resumed a run planned for {planned} to train for {now}; "
                "resume_policy='keep': the parameter schedulers keep their saved end"
            )
            return
        by_epoch = runner.train_loop_by_epoch
        epoch_length = new["max_iters"] // max(new["max_epochs"], 1) if by_epoch else None
        stretched = stretch(_all(runner.param_schedulers), old, new, epoch_length)
        names = ", ".join(type(s).__name__ for s in stretched) or "none ended at the old length"
        runner.logger.info(
            f"resumed a run planned for {planned} to train for {now}; "
            f"resume_policy='stretch' stretched: {names}"
        )

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        schedulers = runner.param_schedulers
        if not schedulers:
            return
        # a plain list is walked as it is: no new list per iteration
        for scheduler in schedulers if type(schedulers) is list else _all(schedulers):
            if not scheduler.by_epoch:
                scheduler.step()

    def after_train_epoch(self, runner: RunnerProtocol) -> None:
        for scheduler in _all(runner.param_schedulers):
            if scheduler.by_epoch:
                scheduler.step()

    def after_val_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        if not metrics:
            return
        for scheduler in _all(runner.param_schedulers):
            if getattr(scheduler, "need_val_args", False):
                scheduler.step(metrics)


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(ParamSchedulerHook)
