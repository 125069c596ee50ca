"""Cosine schedules: annealing (SGDR without restarts) and annealing with restarts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ...registry import PARAM_SCHEDULERS
from .base import INF, OptimizerLike, SchedulerAssertionError, _ParamScheduler, check_sequence


def _eta_min_pair(owner: str, eta_min: float | None, eta_min_ratio: float | None) -> None:
    if eta_min is not None and eta_min_ratio is not None:
        raise SchedulerAssertionError(
            f"{owner}: give either eta_min or eta_min_ratio, not both "
            f"(got eta_min={eta_min}, eta_min_ratio={eta_min_ratio})"
        )


class _EtaMinMixin:
    eta_min: float | None
    eta_min_ratio: float | None

    def _eta_min(self, base_value: float) -> float:
        if self.eta_min_ratio is None:
            return self.eta_min  # type: ignore[return-value]
        return base_value * self.eta_min_ratio


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingParamScheduler(_EtaMinMixin, _ParamScheduler):
    """Anneal the value from its initial value to ``eta_min`` along a half cosine.

    Chained form: the value at step ``t`` is derived from the value at ``t-1``,
    so without interference it equals
    ``eta_min + (base - eta_min) * (1 + cos(pi * t / T_max)) / 2``.

    Args:
        T_max: steps of a half period; ``end - begin`` when not given.
        eta_min: the minimum value (0 when neither it nor ``eta_min_ratio`` is given).
        eta_min_ratio: the minimum as a fraction of each group's initial value.
    """

    epoch_valued_args = ("T_max",)

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        T_max: int | None = None,
        eta_min: float | None = None,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
        eta_min_ratio: float | None = None,
    ) -> None:
        _eta_min_pair(type(self).__name__, eta_min, eta_min_ratio)
        if eta_min is None and eta_min_ratio is None:
            eta_min = 0.0
        self.T_max = T_max or (end - begin)
        self.eta_min = eta_min
        self.eta_min_ratio = eta_min_ratio
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        values = self._current_values()
        step, t_max = self.last_step, self.T_max
        if step == 0:
            return values
        if (step - 1 - t_max) % (2 * t_max) == 0:
            # same operation order as mmengine, for bit-identical values
            cos_step = math.cos(math.pi / t_max)
            return [
                value + (base - self._eta_min(base)) * (1 - cos_step) / 2
                for base, value in zip(self.base_values, values)
            ]
        ratio = (1 + math.cos(math.pi * step / t_max)) / (
            1 + math.cos(math.pi * (step - 1) / t_max)
        )
        if self.eta_min_ratio is None:
            low = self.eta_min
            return [ratio * (value - low) + low for value in values]
        result = []
        for base, value in zip(self.base_values, values):
            eta_min = base * self.eta_min_ratio
            result.append(ratio * (value - eta_min) + eta_min)
        return result


@PARAM_SCHEDULERS.register_module()
class CosineRestartParamScheduler(_EtaMinMixin, _ParamScheduler):
    """Cosine annealing restarted at the end of each period.

    Period ``i`` starts at ``initial value * restart_weights[i]`` and anneals to
    the minimum over ``periods[i]`` steps; after the last period the value is
    left alone.

    Args:
        periods: length of each cosine cycle, in steps (epochs when ``by_epoch``).
        restart_weights: value multiplier at each restart, one per period.
        eta_min: the minimum value (one of ``eta_min``/``eta_min_ratio`` is required).
        eta_min_ratio: the minimum as a fraction of each group's initial value.
    """

    epoch_valued_args = ("periods",)

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        periods: list[int],
        restart_weights: Sequence[float] = (1,),
        eta_min: float | None = None,
        eta_min_ratio: float | None = None,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        name = type(self).__name__
        _eta_min_pair(name, eta_min, eta_min_ratio)
        if eta_min is None and eta_min_ratio is None:
            raise SchedulerAssertionError(f"{name}: one of eta_min or eta_min_ratio is required")
        self.periods = check_sequence(name, "periods", periods)
        self.restart_weights = check_sequence(name, "restart_weights", restart_weights)
        if len(self.periods) != len(self.restart_weights):
            raise SchedulerAssertionError(
                f"{name}: periods and restart_weights must have the same length, got "
                f"{len(self.periods)} periods and {len(self.restart_weights)} weights"
            )
        if any(p <= 0 for p in self.periods):
            raise ValueError(f"{name}: every period must be positive, got {self.periods}")
        self.eta_min = eta_min
        self.eta_min_ratio = eta_min_ratio
        self.cumulative_periods = [sum(self.periods[: i + 1]) for i in range(len(self.periods))]
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    @staticmethod
    def get_position_from_periods(iteration: int, cumulative_periods: list[int]) -> int | None:
        """Return the index of the period containing ``iteration``, or ``None`` past the last."""
        for index, period_end in enumerate(cumulative_periods):
            if iteration < period_end:
                return index
        return None

    def _get_value(self) -> list[Any]:
        values = self._current_values()
        index = self.get_position_from_periods(self.last_step, self.cumulative_periods)
        if index is None:
            return values
        weight = self.restart_weights[index]
        start = 0 if index == 0 else self.cumulative_periods[index - 1]
        period = self.periods[index]
        step = self.last_step - start
        if step == 0:
            return [base * weight for base in self.base_values]
        ratio = (1 + math.cos(math.pi * step / period)) / (
            1 + math.cos(math.pi * (step - 1) / period)
        )
        if self.eta_min_ratio is None:
            low = self.eta_min
            return [ratio * (value - low) + low for value in values]
        result = []
        for base, value in zip(self.base_values, values):
            eta_min = base * self.eta_min_ratio
            result.append(ratio * (value - eta_min) + eta_min)
        return result
