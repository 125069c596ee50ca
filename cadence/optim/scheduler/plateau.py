"""Reduce a parameter when a validation metric stops improving."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ...registry import PARAM_SCHEDULERS
from ...utils import did_you_mean
from .base import INF, OptimizerLike, SchedulerAssertionError, _ParamScheduler, raw_optimizer

_RULES = ("less", "greater")
_THRESHOLD_RULES = ("rel", "abs")


@PARAM_SCHEDULERS.register_module()
class ReduceOnPlateauParamScheduler(_ParamScheduler):
    """Multiply the value by ``factor`` after ``patience`` epochs without improvement.

    ``step()`` without arguments only counts a training epoch (for the
    ``begin``/``end`` window); ``step(metrics)`` with the validation metrics
    dict judges ``metrics[monitor]``. ``need_val_args`` tells the caller to
    pass them. Only epoch-based use is supported.

    Args:
        monitor: the metric key to watch.
        rule: ``'less'`` (lower is better) or ``'greater'``.
        factor: multiplier on a reduction, ``< 1``.
        patience: epochs without improvement tolerated before reducing.
        threshold: minimal change that counts as an improvement.
        threshold_rule: ``'rel'`` (relative to the best) or ``'abs'``.
        cooldown: epochs after a reduction during which bad epochs are ignored.
        min_value: lower bound, one number or one per parameter group.
        eps: reductions smaller than this are skipped.
    """

    need_val_args = True

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        monitor: str = "loss",
        rule: str = "less",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_rule: str = "rel",
        cooldown: int = 0,
        min_value: float | Sequence[float] = 0.0,
        eps: float = 1e-8,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        name = type(self).__name__
        if not by_epoch:
            raise SchedulerAssertionError(
                f"{name} only supports by_epoch=True (it steps after validation)"
            )
        if factor >= 1.0:
            raise ValueError(f"{name}: factor must be < 1.0, got {factor}")
        if rule not in _RULES:
            raise ValueError(f"{name}: rule must be 'less' or 'greater', got {rule!r}")
        if threshold_rule not in _THRESHOLD_RULES:
            raise ValueError(
                f"{name}: threshold_rule must be 'rel' or 'abs', got {threshold_rule!r}"
            )
        if threshold < 0:
            raise ValueError(f"{name}: threshold must be >= 0, got {threshold}")
        self._attach(optimizer, param_name, begin, end, last_step, by_epoch, verbose)
        self._global_step = 0
        self.factor = factor
        self.min_values = self._min_values(optimizer, min_value)
        self.patience = patience
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.eps = eps
        self.monitor = monitor
        self.rule = rule
        self.threshold = threshold
        self.threshold_rule = threshold_rule
        self.rule_worse = INF if rule == "less" else -INF
        self.best: Any = self.rule_worse
        self.num_bad_epochs = 0

    def _min_values(self, optimizer: OptimizerLike, min_value: Any) -> list[Any]:
        groups = self._owner.param_groups
        if not isinstance(min_value, (list, tuple)):
            return [min_value] * len(groups)
        real_groups = raw_optimizer(optimizer).param_groups
        if len(min_value) != len(real_groups):
            raise ValueError(
                f"{type(self).__name__}: expected {len(real_groups)} min_value entries "
                f"(one per param group), got {len(min_value)}"
            )
        values = list(min_value)
        # A wrapper's extra base-settings group takes the last group's bound.
        values.extend([values[-1]] * (len(groups) - len(values)))
        return values

    @classmethod
    def build_iter_from_epoch(cls, *args: Any, **kwargs: Any) -> _ParamScheduler:
        """Not supported: this scheduler steps once per validation."""
        raise ValueError(
            f"{cls.__name__} steps after each validation and cannot be converted to "
            "iteration-based; remove convert_to_iter_based"
        )

    def step(self, metrics: Mapping[str, Any] | None = None) -> None:
        """Count an epoch (no ``metrics``) or judge the validation ``metrics``."""
        if metrics is None:
            self._global_step += 1
            return
        if not isinstance(metrics, Mapping):
            raise TypeError(
                f"{type(self).__name__}.step expects the metrics dict, got {type(metrics).__name__}"
            )
        if self.begin <= self._global_step < self.end:
            metric = metrics.get(self.monitor)
            if metric is None:
                raise KeyError(
                    f"{type(self).__name__}: monitor '{self.monitor}' is not among the "
                    f"metrics {sorted(metrics)}.{did_you_mean(self.monitor, metrics)}"
                )
            self.last_step += 1
            self._judge(metric)
        self._last_value = self._current_values()

    def _judge(self, metric: Any) -> None:
        if self._is_better(metric, self.best):
            self.best = metric
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            groups = self._owner.param_groups
            for index, (group, value) in enumerate(zip(groups, self._get_value())):
                if group[self.param_name] - value > self.eps:
                    self._write(group, index, value)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0

    def _get_value(self) -> list[Any]:
        reduced = [float(value) * self.factor for value in self._current_values()]
        return [max(value, low) for value, low in zip(reduced, self.min_values)]

    def _is_better(self, value: Any, best: Any) -> bool:
        if self.rule == "less":
            if self.threshold_rule == "rel":
                return bool(value < best * (1.0 - self.threshold))
            return bool(value < best - self.threshold)
        if self.threshold_rule == "rel":
            return bool(value > best * (self.threshold + 1.0))
        return bool(value > best + self.threshold)
