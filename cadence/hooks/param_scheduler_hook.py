"""Step the parameter schedulers at the right moments."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..registry import HOOKS
from .hook import Hook

if TYPE_CHECKING:
    from ..runner.protocol import RunnerProtocol


def _all(schedulers: Any) -> Iterable[Any]:
    if schedulers is None:
        return []
    if isinstance(schedulers, dict):
        return [s for group in schedulers.values() for s in group]
    return list(schedulers)


@HOOKS.register_module()
class ParamSchedulerHook(Hook):
    """Step iteration-based schedulers after each iteration and epoch-based ones after
    each epoch (schedulers that need metrics, like ReduceOnPlateau, just count
    there); after validation, give those the metrics."""

    priority = "LOW"

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
