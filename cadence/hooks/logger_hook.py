"""Write training progress to the log and the visualizer at fixed intervals."""

from __future__ import annotations

from typing import Any

from ..registry import HOOKS
from .hook import Hook


def _length(dataloader: Any) -> int:
    """Batches in a dataloader; 0 when it cannot tell (iterable datasets)."""
    try:
        return len(dataloader)
    except TypeError:
        return 0


@HOOKS.register_module()
class LoggerHook(Hook):
    """Every ``interval`` iterations: format the message hub's values with the
    runner's log processor, write the line to the logger and the scalars to the
    visualizer (``scalars.json`` by default). After validation and testing: the
    metrics of the epoch.

    Args:
        interval: iterations between two log lines.
        ignore_last: skip the last, shorter interval of an epoch.
        log_metric_by_epoch: step validation metrics by epoch (else by iteration).
        out_dir: accepted for mmengine configs; logs stay in the run's log dir.
    """

    priority = "BELOW_NORMAL"

    def __init__(
        self,
        interval: int = 10,
        ignore_last: bool = True,
        interval_exp_name: int = 1000,
        out_dir: str | None = None,
        out_suffix: Any = (".json", ".log", ".py", "yaml"),
        keep_local: bool = True,
        file_client_args: Any = None,
        log_metric_by_epoch: bool = True,
        backend_args: Any = None,
    ) -> None:
        if not isinstance(interval, int) or interval <= 0:
            raise ValueError(f"LoggerHook.interval must be a positive int, got {interval!r}")
        self.interval = interval
        self.ignore_last = ignore_last
        self.interval_exp_name = interval_exp_name
        self.out_dir = out_dir
        self.log_metric_by_epoch = log_metric_by_epoch

    def _due(self, runner: Any, batch_idx: int, dataloader: Any) -> bool:
        if runner.train_loop_by_epoch:
            if self.every_n_inner_iters(batch_idx, self.interval):
                return True
            return not self.ignore_last and self.end_of_epoch(dataloader, batch_idx)
        return self.every_n_train_iters(runner, self.interval)

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        if self.every_n_train_iters(runner, self.interval_exp_name):
            runner.logger.info(f"Exp name: {runner.experiment_name}")
        if not self._due(runner, batch_idx, runner.train_loop.dataloader):
            return
        tag, line = runner.log_processor.get_log_after_iter(runner, batch_idx, "train")
        runner.logger.info(line)
        runner.visualizer.add_scalars(tag, step=runner.iter + 1)

    def after_val_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        if self.every_n_inner_iters(batch_idx, self.interval):
            _, line = runner.log_processor.get_log_after_iter(runner, batch_idx, "val")
            runner.logger.info(line)

    def after_test_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        if self.every_n_inner_iters(batch_idx, self.interval):
            _, line = runner.log_processor.get_log_after_iter(runner, batch_idx, "test")
            runner.logger.info(line)

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        tag, line = runner.log_processor.get_log_after_epoch(
            runner, _length(runner.val_loop.dataloader), "val"
        )
        runner.logger.info(line)
        by_epoch = self.log_metric_by_epoch and runner.train_loop_by_epoch
        runner.visualizer.add_scalars(tag, step=runner.epoch if by_epoch else runner.iter)

    def after_test_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        tag, line = runner.log_processor.get_log_after_epoch(
            runner, _length(runner.test_loop.dataloader), "test"
        )
        runner.logger.info(line)
        runner.visualizer.add_scalars(tag, step=runner.iter)
