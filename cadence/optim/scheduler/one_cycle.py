"""The 1cycle policy: warm up to a peak, then anneal far below the start."""

from __future__ import annotations

import math
from numbers import Real
from typing import Any

from ...registry import PARAM_SCHEDULERS
from .base import INF, OptimizerLike, _ParamScheduler, param_groups_owner


def _anneal_cos(start: float, end: float, pct: float) -> float:
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start: float, end: float, pct: float) -> float:
    return (end - start) * pct + start


_ANNEALERS = {"cos": _anneal_cos, "linear": _anneal_linear}


@PARAM_SCHEDULERS.register_module()
class OneCycleParamScheduler(_ParamScheduler):
    """Anneal from ``eta_max / div_factor`` up to ``eta_max``, then down to a minimum.

    Not chainable: values are computed from ``initial_<p>``, ``max_<p>`` and
    ``min_<p>``, which it stores in each parameter group. Only ``'lr'`` is
    supported (as in mmengine).

    Args:
        eta_max: peak value, one number or one per parameter group.
        total_steps: steps in the cycle; ``end - begin`` when not given.
        pct_start: fraction of the cycle spent increasing.
        anneal_strategy: ``'cos'`` or ``'linear'``.
        div_factor: initial value is ``eta_max / div_factor``.
        final_div_factor: minimum is ``initial / final_div_factor``.
        three_phase: go back to the initial value before annealing to the
            minimum (symmetric warm-up/cool-down around the peak).
    """

    epoch_valued_args = ("total_steps",)

    def __init__(
        self,
        optimizer: OptimizerLike,
        param_name: str,
        eta_max: float | list[float] = 0,
        total_steps: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        begin: int = 0,
        end: int = INF,
        last_step: int = -1,
        by_epoch: bool = True,
        verbose: bool = False,
    ) -> None:
        name = type(self).__name__
        if param_name != "lr":
            raise ValueError(f"{name} only schedules 'lr', got param_name={param_name!r}")
        if total_steps is None:
            total_steps = end - begin
        elif isinstance(total_steps, bool) or not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"{name}: total_steps must be a positive int, got {total_steps!r}")
        numeric = isinstance(pct_start, Real) and not isinstance(pct_start, bool)
        if not numeric or not 0 <= pct_start <= 1:
            raise ValueError(f"{name}: pct_start must be a number in [0, 1], got {pct_start!r}")
        if anneal_strategy not in _ANNEALERS:
            raise ValueError(
                f"{name}: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}"
            )
        self.eta_max = eta_max
        self.div_factor = div_factor
        self.final_div_factor = final_div_factor
        self.total_steps: int = total_steps
        self.anneal_strategy: str = anneal_strategy
        phases = self._phases(param_name, float(pct_start), three_phase)
        self._schedule_phases: list[dict[str, Any]] = phases
        groups = param_groups_owner(optimizer).param_groups
        peaks = self._per_group(name, eta_max, len(groups))
        if last_step == -1:
            for group, peak in zip(groups, peaks):
                group[f"initial_{param_name}"] = peak / div_factor
                group[f"max_{param_name}"] = peak
                group[f"min_{param_name}"] = group[f"initial_{param_name}"] / final_div_factor
        super().__init__(optimizer, param_name, begin, end, last_step, by_epoch, verbose)

    def _phases(self, p: str, pct_start: float, three_phase: bool) -> list[dict[str, Any]]:
        total = self.total_steps
        initial, peak, low = f"initial_{p}", f"max_{p}", f"min_{p}"
        warmup_end = float(pct_start * total) - 1
        if three_phase:
            bounds = [
                (warmup_end, initial, peak),
                (float(2 * pct_start * total) - 2, peak, initial),
                (total - 1, initial, low),
            ]
        else:
            bounds = [(warmup_end, initial, peak), (total - 1, peak, low)]
        return [
            {"end_step": end_step, f"start_{p}": start, f"end_{p}": stop}
            for end_step, start, stop in bounds
        ]

    @staticmethod
    def _per_group(owner: str, value: Any, count: int) -> list[Any]:
        if isinstance(value, (list, tuple)):
            if len(value) != count:
                raise ValueError(
                    f"{owner}: expected {count} values of eta_max (one per param group), "
                    f"got {len(value)}"
                )
            return list(value)
        return [value] * count

    def _get_value(self) -> list[Any]:
        step = self.last_step
        if step > self.total_steps:
            raise ValueError(
                f"{type(self).__name__}: tried to step {step + 1} times but total_steps is "
                f"{self.total_steps}"
            )
        anneal = _ANNEALERS[self.anneal_strategy]
        start_key, end_key = f"start_{self.param_name}", f"end_{self.param_name}"
        phases = self._schedule_phases
        last = len(phases) - 1
        values = []
        for group in self._owner.param_groups:
            phase_start = 0.0
            for index, phase in enumerate(phases):
                phase_end = phase["end_step"]
                if step <= phase_end or index == last:
                    pct = (step - phase_start) / (phase_end - phase_start)
                    values.append(anneal(group[phase[start_key]], group[phase[end_key]], pct))
                    break
                phase_start = phase_end
        return values
