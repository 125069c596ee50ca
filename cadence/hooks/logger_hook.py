"""Write training progress to the log and the visualizer at fixed intervals."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from ..fileio import check_url, copyfile, join_path, list_dir_or_file
from ..logging.progress import ProgressBar, check_progress_mode, format_loss, wants_bar
from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook
from .log_processor import mode_loop
from .run_summary import start_lines, summary_lines


def metric_rule(name: str) -> str | None:
    """``'greater'``/``'less'`` for a metric name as ``save_best='auto'`` infers it, else None."""
    from .early_stopping_hook import infer_rule

    try:
        return infer_rule(name)
    except ValueError:
        return None


if TYPE_CHECKING:
    from ..contracts import RunnerProtocol
    from ..loops import BaseLoop


def _length(dataloader: Any) -> int:
    """Batches in a dataloader; 0 when it cannot tell (iterable datasets)."""
    try:
        return len(dataloader)
    except (TypeError, NotImplementedError):
        return 0


def _loop_length(loop: BaseLoop | None) -> int:
    """Batches in a loop's dataloader; 0 without a loop or when it cannot tell."""
    return _length(getattr(loop, "dataloader", None))


def _window_end(runner: RunnerProtocol, start: int) -> int:
    """Where the iteration window that starts after ``start`` done iterations ends.

    At the next validation (a multiple of the loop's ``val_interval``) when the
    run validates, else at ``max_iters``.
    """
    end = runner.max_iters
    loop = runner.train_loop
    interval = getattr(loop, "val_interval", 0)  # a custom loop may have none
    if isinstance(interval, int) and interval > 0 and runner.val_loop:
        end = min(end, (start // interval + 1) * interval)
    return end


@HOOKS.register_module()
class LoggerHook(Hook):
    """Every ``interval`` iterations: format the message hub's values with the
    runner's log processor, write the line to the logger and the scalars to the
    visualizer (``scalars.json`` by default). After validation and testing: the
    metrics of the epoch. Optionally, a live progress bar on the console.

    Args:
        interval: iterations between two log lines.
        ignore_last: skip the last, shorter interval of an epoch.
        interval_exp_name: iterations between two lines naming the experiment
            (0: never).
        log_metric_by_epoch: step validation metrics by epoch (else by iteration).
        progress: the console progress bar, shown by rank 0 only:

            * ``'auto'`` (default): a bar when the console (``sys.stdout``) is
              an interactive terminal; when output is redirected (files, SLURM
              logs, pipes, pytest) nothing changes: plain log lines, no
              control characters.
            * ``'bar'``: always a bar, even into a file (it then contains
              terminal control sequences).
            * ``'off'``: never a bar.

            The bar follows the current train epoch (for iteration-based
            training: the iterations up to the next validation, or to the end),
            then each validation or test pass, and shows iterations per
            second, the time left and the latest loss. It is redrawn at most
            5 times per second; between redraws an iteration costs one
            counter update. Log lines still appear, above the bar.
        out_dir: at the end of the run, copy the log dir's files ending in
            ``out_suffix`` to ``out_dir/<name of the work dir>/`` (a path or a URL, with
            ``backend_args``/``file_client_args`` as storage options); ``keep_local=False``
            deletes the local copies (as mmengine).

    Example::

        default_hooks = dict(logger=dict(type='LoggerHook', interval=50, progress='off'))
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
        progress: str = "auto",
    ) -> None:
        if not isinstance(interval, int) or isinstance(interval, bool) or interval <= 0:
            raise ValueError(f"LoggerHook.interval must be a positive int, got {interval!r}")
        if not isinstance(interval_exp_name, int) or interval_exp_name < 0:
            raise ValueError(
                f"LoggerHook.interval_exp_name must be an int >= 0, got {interval_exp_name!r}"
            )
        self.interval = interval
        self.ignore_last = ignore_last
        self.interval_exp_name = interval_exp_name
        problem = check_url(out_dir, "LoggerHook.out_dir")
        if problem is not None:
            raise ValueError(problem)
        self.out_dir = out_dir
        self.out_suffix = out_suffix if isinstance(out_suffix, str) else tuple(out_suffix)
        self.keep_local = keep_local
        self.backend_args = dict(backend_args or file_client_args or {})
        self.log_metric_by_epoch = log_metric_by_epoch
        self.progress = check_progress_mode(progress)
        self._bar: ProgressBar | None = None
        self._by_epoch: bool | None = None
        self._epoch_len = 0
        #: ``<timestamp>.json``: the scalars also go to ``vis_data/<timestamp>.json`` (mmengine's)
        self.json_log_path: str | None = None
        self._train_started = time.perf_counter()
        self._logged_loss: float | None = None

    def _json_log(self, runner: RunnerProtocol) -> str:
        if self.json_log_path is None:
            self.json_log_path = f"{os.path.basename(os.path.normpath(runner.log_dir))}.json"
        return self.json_log_path

    # ------------------------------------------------------------ lifecycle
    def before_run(self, runner: RunnerProtocol) -> None:
        self.json_log_path = None  # this run's log dir
        show = wants_bar(self.progress, runner.rank)
        self._bar = ProgressBar() if show else None

    def after_run(self, runner: RunnerProtocol) -> None:
        """Stop the bar and close the visualizer (its backends reopen if the runner logs again)."""
        self._stop_bar()
        visualizer = runner.visualizer
        close = getattr(visualizer, "close", None)
        if callable(close):
            close()
        if self.out_dir is not None and runner.rank == 0:
            self._copy_logs(runner)

    def _copy_logs(self, runner: RunnerProtocol) -> None:
        """Copy the log dir's files ending in ``out_suffix`` to ``out_dir/<work dir name>/``
        (local or a URL; as mmengine), deleting the local ones unless ``keep_local``."""
        assert self.out_dir is not None
        name = os.path.basename((runner.paths.remote_work_dir or runner.work_dir).rstrip("/"))
        target = join_path(self.out_dir, name)
        for relative in list_dir_or_file(runner.log_dir, list_dir=False,
                                         suffix=self.out_suffix, recursive=True):  # fmt: skip
            local = os.path.join(runner.log_dir, relative)
            copyfile(local, join_path(target, relative), self.backend_args)
            if not self.keep_local:
                os.remove(local)
        runner.logger.info(f"Log files are copied to {target}")

    def before_train(self, runner: RunnerProtocol) -> None:
        self._setup_train(runner)
        self._train_started = time.perf_counter()
        for line in start_lines(runner):
            runner.logger.info(line)

    def _setup_train(self, runner: RunnerProtocol) -> bool:
        by_epoch = self._by_epoch = bool(runner.train_loop_by_epoch)
        self._epoch_len = _length(runner.train_loop.dataloader)
        return by_epoch

    def after_train(self, runner: RunnerProtocol) -> None:
        self._stop_bar()
        seconds = time.perf_counter() - self._train_started
        runner.logger.info("\n".join(summary_lines(runner, seconds, metric_rule)))

    def _stop_bar(self) -> None:
        if self._bar is not None:
            self._bar.stop()

    # ---------------------------------------------------------------- train
    def before_train_epoch(self, runner: RunnerProtocol) -> None:
        bar = self._bar
        if bar is not None and self._by_epoch:
            loop = runner.train_loop
            bar.start(
                f"Epoch {runner.epoch + 1}/{runner.max_epochs}",
                total=self._epoch_len or None,
                completed=getattr(loop, "inner_iter", 0),
                transient=True,
            )

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        done = runner.iter + 1
        every = self.interval_exp_name
        if every and not done % every:
            runner.logger.info(f"Exp name: {runner.experiment_name}")
        by_epoch = self._by_epoch
        if by_epoch is None:
            by_epoch = self._setup_train(runner)
        bar = self._bar
        if bar is not None:
            if not bar.active and not by_epoch:
                start = done - 1
                end = _window_end(runner, start)
                bar.start(f"Iter {start + 1}-{end}/{runner.max_iters}", total=end - start,
                          transient=True)  # fmt: skip
            if bar.tick():
                self._show_train(runner, bar, by_epoch, self._logged_loss)
        if by_epoch:
            n = batch_idx + 1
            if n % self.interval and (self.ignore_last or n != self._epoch_len):
                return
        elif done % self.interval:
            return
        # a log line is due
        tag, line = runner.log_processor.get_log_after_iter(runner, batch_idx, "train")
        self._logged_loss = tag.get("loss")  # the bar shows the log's smoothed loss
        runner.logger.info(line)
        runner.visualizer.add_scalars(tag, step=done, file_path=self._json_log(runner))

    @staticmethod
    def _show_train(
        runner: RunnerProtocol, bar: ProgressBar, by_epoch: bool, loss: float | None
    ) -> None:
        """Redraw with the loss of the latest log line and the run's eta (the log's)."""
        eta = runner.message_hub.runtime_info.get("eta")
        bar.show(format_loss(loss), eta=eta)
        if bar.finished and not by_epoch:
            bar.stop()

    def after_train_epoch(self, runner: RunnerProtocol) -> None:
        if self._by_epoch:
            self._stop_bar()

    # ----------------------------------------------------------- evaluation
    def _start_eval_bar(self, runner: RunnerProtocol, mode: str) -> None:
        bar = self._bar
        if bar is not None:
            total = _loop_length(mode_loop(runner, mode))
            bar.start(mode.capitalize(), total=total or None, transient=True)

    def _eval_iter(self, runner: RunnerProtocol, batch_idx: int, mode: str) -> None:
        bar = self._bar
        if bar is not None and bar.tick():
            bar.show()
        if (batch_idx + 1) % self.interval == 0:
            _, line = runner.log_processor.get_log_after_iter(runner, batch_idx, mode)
            runner.logger.info(line)

    def before_val_epoch(self, runner: RunnerProtocol) -> None:
        self._start_eval_bar(runner, "val")

    def before_test_epoch(self, runner: RunnerProtocol) -> None:
        self._start_eval_bar(runner, "test")

    def after_val_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        self._eval_iter(runner, batch_idx, "val")

    def after_test_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        self._eval_iter(runner, batch_idx, "test")

    def after_val_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        self._stop_bar()
        tag, line = runner.log_processor.get_log_after_epoch(
            runner, _loop_length(runner.val_loop), "val"
        )
        runner.logger.info(line)
        by_epoch = self.log_metric_by_epoch and runner.train_loop_by_epoch
        step = runner.epoch if by_epoch else runner.iter
        runner.visualizer.add_scalars(tag, step=step, file_path=self._json_log(runner))

    def after_test_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        self._stop_bar()
        tag, line = runner.log_processor.get_log_after_epoch(
            runner, _loop_length(runner.test_loop), "test"
        )
        runner.logger.info(line)
        runner.visualizer.add_scalars(tag, step=runner.iter, file_path=self._json_log(runner))


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(LoggerHook)
