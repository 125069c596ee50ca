"""Chained multiplicative schedules: constant, step, multi-step, exponential, linear, poly.

Each computes the next value from the value currently in the parameter group,
so it composes with other schedulers acting on the same parameter.
"""

from __future__ import annotations

from collections import Counter
from numbers import Real
from typing import Any

from ...registry import PARAM_SCHEDULERS
from .base import INF, OptimizerLike, _ParamScheduler, check_sequence


@PARAM_SCHEDULERS.register_module()
class ConstantParamScheduler(_ParamScheduler):
    """Multiply the value by ``factor`` from ``begin`` until the last step before ``end``.

    Args:
        factor: multiplier applied during the window, in ``[0, 1]``.
        (other arguments as :class:`_ParamScheduler`)
    """

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        factor: float = 1.0 / 3,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if not 0 <= factor <= 1:
            raise ValueError(f"{type(self).__name__}: factor must be in [0, 1], got {factor}")
        if factor == 0 and end != INF:
            raise ValueError(
                f"{type(self).__name__}: factor=0 cannot be undone at end={end}; "
                "use a small positive factor"
            )
        self.factor = factor
        self.total_iters = end - begin - 1
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        values = self._current_values()
        if self.last_step == 0:
            return [value * self.factor for value in values]
        if self.last_step == self.total_iters:
            return [value * (1.0 / self.factor) for value in values]
        return values


@PARAM_SCHEDULERS.register_module()
class StepParamScheduler(_ParamScheduler):
    """Multiply the value by ``gamma`` every ``step_size`` steps.

    Args:
        step_size: period of the decay, in steps (epochs when ``by_epoch``).
        gamma: multiplicative decay factor.
    """

    epoch_valued_args = ("step_size",)

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        step_size: int,
        gamma: float = 0.1,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        if not isinstance(step_size, Real) or step_size <= 0:
            raise ValueError(
                f"{type(self).__name__}: step_size must be a positive number, got {step_size!r}"
            )
        self.step_size: float = step_size
        self.gamma: float = gamma
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        values = self._current_values()
        if self.last_step == 0 or self.last_step % self.step_size != 0:
            return values
        return [value * self.gamma for value in values]


@PARAM_SCHEDULERS.register_module()
class MultiStepParamScheduler(_ParamScheduler):
    """Multiply the value by ``gamma`` at each milestone (repeated milestones compound).

    Args:
        milestones: steps (epochs when ``by_epoch``) at which to decay.
        gamma: multiplicative decay factor.
    """

    epoch_valued_args = ("milestones",)

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        milestones: list[int],
        gamma: float = 0.1,
        last_step: int = -1,
        begin: int = 0,
        end: int = INF,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self.milestones = dict(
            Counter(check_sequence(type(self).__name__, "milestones", milestones))
        )
        self.gamma = gamma
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        values = self._current_values()
        count = self.milestones.get(self.last_step)
        if count is None:
            return values
        return [value * self.gamma**count for value in values]


@PARAM_SCHEDULERS.register_module()
class ExponentialParamScheduler(_ParamScheduler):
    """Multiply the value by ``gamma`` every step after the first.

    Args:
        gamma: multiplicative decay factor per step (not rescaled when
            converting epochs to iterations, as in mmengine).
    """

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        gamma: float,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self.gamma = gamma
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        values = self._current_values()
        if self.last_step == 0:
            return values
        return [value * self.gamma for value in values]


@PARAM_SCHEDULERS.register_module()
class LinearParamScheduler(_ParamScheduler):
    """Ramp the multiplier linearly from ``start_factor`` to ``end_factor`` over the window.

    Args:
        start_factor: multiplier at ``begin``, in ``[0, 1]``. With 0 the value
            starts at zero (mmengine accepts 0 but then divides by zero at the
            next step); the ramp then continues from the value the group had
            before this scheduler's first step.
        end_factor: multiplier at the last step before ``end``, in ``[0, 1]``.
    """

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        name = type(self).__name__
        if not 0 <= start_factor <= 1:
            raise ValueError(f"{name}: start_factor must be in [0, 1], got {start_factor}")
        if not 0 <= end_factor <= 1:
            raise ValueError(f"{name}: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = end - begin - 1
        # start_factor=0: the values before the first step, since 0 cannot be scaled back up
        self.zero_start_values: list[Any] | None = None
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _factor(self, step: int) -> float:
        span = self.end_factor - self.start_factor
        return self.start_factor + span * min(step, self.total_iters) / max(self.total_iters, 1)

    def _get_value(self) -> list[Any]:
        values = self._current_values()
        if self.last_step == 0:
            if self.start_factor == 0:
                self.zero_start_values = list(values)
            return [value * self.start_factor for value in values]
        if self.start_factor == 0 and self.last_step == 1:
            # the chained ratio is undefined after a zero value: scale what was there before
            before = self.zero_start_values
            if before is None:  # resumed with last_step=0 but without this scheduler's state
                before = self.base_values
            return [value * self._factor(1) for value in before]
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_step - 1) * span)
        return [value * ratio for value in values]


@PARAM_SCHEDULERS.register_module()
class PolyParamScheduler(_ParamScheduler):
    """Decay the value polynomially towards ``eta_min`` at the last step before ``end``.

    Args:
        eta_min: value reached at the end of the window.
        power: exponent of the polynomial.
    """

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        eta_min: float = 0,
        power: float = 1.0,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        self.eta_min = eta_min
        self.power = power
        self.total_iters = end - begin - 1
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _get_value(self) -> list[Any]:
        values = self._current_values()
        if self.last_step == 0:
            return values
        decay = (1 - 1 / (self.total_iters - self.last_step + 1)) ** self.power
        return [(value - self.eta_min) * decay + self.eta_min for value in values]
