"""Average the run time of a function or a code block (mmengine's ``TimeCounter``)."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any, ClassVar

import torch


class TimeCounterError(ValueError, AssertionError):
    """A bad ``TimeCounter`` setting (mmengine asserted, hence both bases)."""


class TimeCounter:
    """A decorator or context manager that reports the mean time per run.

    The first ``warmup_interval`` runs are not counted; afterwards, every
    ``log_interval`` runs it reports ``[tag]-time per run averaged in the past N
    runs: X ms`` through ``logger`` (a ``logging.Logger``; ``print`` when ``None``).
    Counters with the same ``tag`` share their counts. ``with_sync`` synchronises
    CUDA around each run so that asynchronous kernels are timed.
    """

    _instances: ClassVar[dict[str, TimeCounter]] = {}

    def __new__(
        cls,
        log_interval: int = 1,
        warmup_interval: int = 1,
        with_sync: bool = True,
        tag: str | None = None,
        logger: logging.Logger | None = None,
    ) -> TimeCounter:
        if tag is not None and tag in cls._instances:
            return cls._instances[tag]
        instance = super().__new__(cls)
        if tag is not None:
            cls._instances[tag] = instance
        return instance

    def __init__(
        self,
        log_interval: int = 1,
        warmup_interval: int = 1,
        with_sync: bool = True,
        tag: str | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        if getattr(self, "_initialised", False):
            return
        if log_interval < 1 or warmup_interval < 1:
            raise TimeCounterError(
                "log_interval and warmup_interval must be >= 1, got "
                f"{log_interval} and {warmup_interval}"
            )
        self.log_interval = log_interval
        self.warmup_interval = warmup_interval
        self.with_sync = with_sync
        self.tag = tag
        self.logger = logger
        self.num_runs = 0  # runs seen, warm-up included
        self.total_time = 0.0  # seconds over counted runs
        self._start = 0.0
        self._initialised = True

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        if self.tag is None:
            self.tag = fn.__qualname__

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapped

    def _sync(self) -> None:
        if self.with_sync and torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.synchronize()

    def __enter__(self) -> TimeCounter:
        if self.tag is None:
            raise TimeCounterError(
                "TimeCounter used as a context manager needs tag=... to name what its reports time"
            )
        self._sync()
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self._sync()
        elapsed = time.perf_counter() - self._start
        self.num_runs += 1
        if self.num_runs <= self.warmup_interval:
            return
        self.total_time += elapsed
        counted = self.num_runs - self.warmup_interval
        if counted % self.log_interval == 0:
            message = (
                f"[{self.tag}]-time per run averaged in the past {counted} runs: "
                f"{self.total_time / counted * 1000:.1f} ms"
            )
            if self.logger is None:
                print(message)
            else:
                self.logger.info(message)
