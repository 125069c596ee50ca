"""Time each iteration and the wait for its data; estimate the time left."""

from __future__ import annotations

import time
from typing import Any

from ..registry import HOOKS
from .hook import Hook


@HOOKS.register_module()
class IterTimerHook(Hook):
    """Record ``<mode>/data_time`` and ``<mode>/time`` per iteration, and ``eta``."""

    priority = "NORMAL"

    def __init__(self) -> None:
        self._last = 0.0
        self._train_time = 0.0
        self._train_iters = 0

    def _start(self, runner: Any) -> None:
        self._last = time.perf_counter()

    before_train_epoch = _start
    before_val_epoch = _start
    before_test_epoch = _start

    def before_train(self, runner: Any) -> None:
        self._train_time, self._train_iters = 0.0, 0

    def _before_iter(self, runner: Any, mode: str) -> None:
        runner.message_hub.update_scalar(f"{mode}/data_time", time.perf_counter() - self._last)

    def _after_iter(self, runner: Any, mode: str) -> float:
        now = time.perf_counter()
        elapsed = now - self._last
        runner.message_hub.update_scalar(f"{mode}/time", elapsed)
        self._last = now
        return elapsed

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        self._before_iter(runner, "train")

    def before_val_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        self._before_iter(runner, "val")

    def before_test_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        self._before_iter(runner, "test")

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        self._train_time += self._after_iter(runner, "train")
        self._train_iters += 1
        remaining = runner.max_iters - runner.iter - 1
        runner.message_hub.update_info("eta", self._train_time / self._train_iters * remaining)

    def after_val_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        self._after_iter(runner, "val")

    def after_test_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        self._after_iter(runner, "test")
