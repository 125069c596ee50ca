"""Stop training when a validation metric stops improving."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any

from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .checkpoint_hook import GREATER_KEYS, LESS_KEYS
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def infer_rule(monitor: str) -> str:
    """``'greater'`` for accuracy-like metric names, ``'less'`` for loss-like ones.

    An exact (case-insensitive) match with a known key wins over a substring match.
    """
    name = monitor.lower()
    greater = [k.lower() for k in GREATER_KEYS]
    less = [k.lower() for k in LESS_KEYS]
    if name in greater:
        return "greater"
    if name in less:
        return "less"
    if any(k in name for k in greater):
        return "greater"
    if any(k in name for k in less):
        return "less"
    raise ValueError(
        f"EarlyStoppingHook cannot tell whether a larger '{monitor}' is better; set "
        "rule='greater' or rule='less'"
    )


class MissingMonitorError(KeyError, RuntimeError):
    """``strict=True`` and the monitored metric is not among the validation metrics (a
    ``KeyError``, and the ``RuntimeError`` mmengine raises)."""

    def __str__(self) -> str:  # KeyError would add quotes
        return str(self.args[0]) if self.args else ""


@HOOKS.register_module()
class EarlyStoppingHook(Hook):
    """Stop training after ``patience`` validations without improvement of ``monitor``.

    A validation improves when the metric beats the best so far by at least
    ``min_delta`` (in the direction of ``rule``). Training also stops at once
    when the metric is NaN/Inf (``check_finite``) or passes
    ``stopping_threshold``. The reason is logged.

    Args:
        monitor: metric name, e.g. ``'accuracy/top1'``.
        rule: ``'greater'`` or ``'less'``; inferred from ``monitor`` when omitted.
        min_delta: smallest change that counts as an improvement.
        strict: raise when ``monitor`` is missing from the metrics (else warn).
        check_finite: stop when the metric is not finite.
        patience: validations without improvement before stopping (0: stop at the
            first one).
        stopping_threshold: stop as soon as the metric is better than this.
    """

    priority = "LOWEST"

    def __init__(
        self,
        monitor: str,
        rule: str | None = None,
        min_delta: float = 0.1,
        strict: bool = False,
        check_finite: bool = True,
        patience: int = 5,
        stopping_threshold: float | None = None,
    ) -> None:
        if rule is not None and rule not in ("greater", "less"):
            raise ValueError(f"EarlyStoppingHook.rule must be 'greater' or 'less', got {rule!r}")
        if not isinstance(patience, int) or patience < 0:
            raise ValueError(f"EarlyStoppingHook.patience must be an int >= 0, got {patience!r}")
        if min_delta < 0:
            raise ValueError(f"EarlyStoppingHook.min_delta must be >= 0, got {min_delta}")
        self.monitor = monitor
        self.rule = rule or infer_rule(monitor)
        self.min_delta = min_delta
        self.strict = strict
        self.check_finite = check_finite
        self.patience = patience
        self.stopping_threshold = stopping_threshold
        self.best_score = -math.inf if self.rule == "greater" else math.inf
        self.wait_count = 0
        # validations count unless a run says it is not training (a stand-alone val())
        self._training = True

    def _better(self, a: float, b: float) -> bool:
        return a > b if self.rule == "greater" else a < b

    def check(self, score: Any) -> str | None:
        """Record one validation's ``score`` (a number or a one-element tensor, kept as
        given in ``best_score``, as mmengine does); return why to stop, or ``None``."""
        raw, score = score, float(score)
        if self.check_finite and not math.isfinite(score):
            return (
                f"the monitored metric {self.monitor} = {score} is not finite; the best value "
                f"was {self.best_score:.4f}"
            )
        if self.stopping_threshold is not None and self._better(score, self.stopping_threshold):
            self.best_score = raw
            return (
                f"the monitored metric {self.monitor} = {score} is {self.rule} than the "
                f"stopping threshold {self.stopping_threshold}"
            )
        step = self.min_delta if self.rule == "greater" else -self.min_delta
        best = float(self.best_score)
        if self._better(score, best + step) or score == best + step:
            self.best_score = raw
            self.wait_count = 0
            return None
        self.wait_count += 1
        if self.wait_count >= self.patience:
            return (
                f"the monitored metric {self.monitor} did not improve by {self.min_delta} in the "
                f"last {self.wait_count} validations; the best value was {self.best_score:.4f}"
            )
        return None

    # ------------------------------------------------------------- stages
    def before_run(self, runner: RunnerProtocol) -> None:
        """Validations count only once training starts (:meth:`before_train`)."""
        self._training = False

    def before_train(self, runner: RunnerProtocol) -> None:
        if not hasattr(runner.train_loop, "stop_training"):
            raise TypeError(
                f"EarlyStoppingHook needs a training loop with a 'stop_training' flag; "
                f"{type(runner.train_loop).__name__} has none"
            )
        self._training = True

    def after_train(self, runner: RunnerProtocol) -> None:
        self._training = False

    def after_val_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        """Decide whether to stop, from this validation's metrics."""
        if not self._training:
            return  # a stand-alone validation does not count
        metrics = metrics or {}
        if self.monitor not in metrics:
            from ..utils import did_you_mean

            message = (
                f"EarlyStoppingHook: the monitored metric '{self.monitor}' is not among the "
                f"validation metrics {sorted(metrics)}.{did_you_mean(self.monitor, metrics)}"
            )
            if self.strict:
                raise MissingMonitorError(message)
            warnings.warn(message + " Skipping the early-stopping check.", stacklevel=2)
            return
        reason = self.check(metrics[self.monitor])
        if reason is not None:
            loop: Any = runner.train_loop  # before_train checked it has the flag
            loop.stop_training = True
            runner.logger.info(f"Early stopping: {reason}")

    # -------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        return {"best_score": float(self.best_score), "wait_count": int(self.wait_count)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.best_score = float(state["best_score"])
        self.wait_count = int(state["wait_count"])


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(EarlyStoppingHook)
