"""Time each iteration and the wait for its data; estimate the time left."""

from __future__ import annotations

from collections.abc import Callable
from time import perf_counter
from typing import TYPE_CHECKING, Any

from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from ..utils.flops import StepFlopCounter
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

#: ``done & _TRIM_EVERY == 0`` every 1024 training steps: the buffers are trimmed then
_TRIM_EVERY = 1023


def _length(loop: Any) -> int:
    """Batches in a loop's dataloader; 0 when it cannot tell (iterable datasets)."""
    try:
        return len(loop.dataloader)
    except (AttributeError, TypeError, NotImplementedError):
        return 0


@HOOKS.register_module()
class IterTimerHook(Hook):
    """Record ``<mode>/data_time`` and ``<mode>/time`` per iteration, and ``eta``.

    ``data_time`` is the wait from the end of the previous iteration to the
    start of this one (loading the batch); ``time`` runs from the end of the
    previous iteration to the end of this one. Two clock reads per iteration.

    ``eta`` (runtime information, in seconds) is the mean iteration time *of
    this process* times the iterations left, so it is right from the first
    iteration after resuming at any iteration. During validation and testing
    it estimates the rest of that loop instead, as mmengine does; time spent
    validating is not counted as training time.

    It also records ``train/num_tokens`` when a batch is a dict with a ``num_tokens``
    entry (tokens/s in the log), and counts the model FLOPs of the first training step
    (``flops_per_step`` in the runtime info: TFLOP/s and MFU in the log; see
    :mod:`cadence.utils.flops`).
    """

    priority = "NORMAL"

    def __init__(self) -> None:
        self._hub: Any = None  # the message hub the writers below write to (taken on first use)
        self._write_data_time: Callable[[Any], None] | None = None
        self._write_time: Callable[[Any], None] | None = None
        self._set_eta: Callable[[Any], None] | None = None
        self._last = 0.0
        self._train_time = 0.0
        self._train_done = 0
        self._train_left = 0  # iterations left when this process started training
        self._eval_time = 0.0
        self._eval_done = 0
        self._eval_total = 0
        self._flops = StepFlopCounter()

    # ---------------------------------------------------------------- train
    def before_train(self, runner: RunnerProtocol) -> None:
        self._train_time, self._train_done = 0.0, 0
        self._train_left = runner.max_iters - runner.iter

    def before_train_epoch(self, runner: RunnerProtocol) -> None:
        self._last = perf_counter()

    def _writers(self, hub: Any) -> None:
        # the clock differences are Python floats: the buffers' own list appends
        self._hub = hub
        self._write_data_time = hub.number_writer("train/data_time")
        self._write_time = hub.number_writer("train/time")
        self._set_eta = hub.info_writer("eta")

    def _trim(self, hub: Any) -> None:
        """Bound the two buffers the number writers append to (every 1024 steps)."""
        hub.get_scalar("train/data_time").trim()
        hub.get_scalar("train/time").trim()

    def before_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None
    ) -> None:
        waited = perf_counter() - self._last
        if runner.message_hub is not self._hub:
            self._writers(runner.message_hub)
        self._write_data_time(waited)  # type: ignore[misc]
        if not self._flops.done:
            strategy = runner.strategy
            self._flops.start(
                type(strategy).__name__, runner.compiled, strategy.unwrap(runner.model)
            )

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        now = perf_counter()
        elapsed = now - self._last
        self._last = now
        if runner.message_hub is not self._hub:
            self._writers(runner.message_hub)
        self._write_time(elapsed)  # type: ignore[misc]
        if not self._flops.done:
            flops = self._flops.stop()
            if flops:
                runner.message_hub.update_info("flops_per_step", flops)
        if isinstance(data_batch, dict) and "num_tokens" in data_batch:
            runner.message_hub.update_scalar("train/num_tokens", data_batch["num_tokens"])
        total = self._train_time = self._train_time + elapsed
        done = self._train_done = self._train_done + 1
        self._set_eta(total / done * (self._train_left - done))  # type: ignore[misc]
        if not done & _TRIM_EVERY:
            self._trim(self._hub)

    # ----------------------------------------------------------- evaluation
    def _before_eval_epoch(self, loop: Any) -> None:
        self._eval_time, self._eval_done = 0.0, 0
        self._eval_total = _length(loop)
        self._last = perf_counter()

    def _after_eval_iter(self, runner: RunnerProtocol, key: str) -> None:
        now = perf_counter()
        elapsed = now - self._last
        self._last = now
        hub = runner.message_hub
        hub.update_scalar(key, elapsed)
        total = self._eval_time = self._eval_time + elapsed
        done = self._eval_done = self._eval_done + 1
        if self._eval_total:
            hub.update_info("eta", total / done * max(self._eval_total - done, 0))

    def _after_eval(self, runner: RunnerProtocol) -> None:
        # training may go on: its next data_time starts now, not at the last eval batch
        self._last = perf_counter()

    def before_val_epoch(self, runner: RunnerProtocol) -> None:
        self._before_eval_epoch(runner.val_loop)

    def before_test_epoch(self, runner: RunnerProtocol) -> None:
        self._before_eval_epoch(runner.test_loop)

    def before_val_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None
    ) -> None:
        runner.message_hub.update_scalar("val/data_time", perf_counter() - self._last)

    def before_test_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None
    ) -> None:
        runner.message_hub.update_scalar("test/data_time", perf_counter() - self._last)

    def after_val_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        self._after_eval_iter(runner, "val/time")

    def after_test_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        self._after_eval_iter(runner, "test/time")

    after_val = _after_eval
    after_test = _after_eval


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(IterTimerHook)
