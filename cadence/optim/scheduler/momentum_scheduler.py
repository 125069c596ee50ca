"""Momentum schedulers: ``momentum`` for SGD-like optimizers, ``betas[0]`` for Adam-like."""

from __future__ import annotations

from typing import Any

from ...registry import PARAM_SCHEDULERS
from .base import OptimizerLike, _FixedParamScheduler, param_groups_owner, raw_optimizer
from .cosine import CosineAnnealingParamScheduler, CosineRestartParamScheduler
from .multiplicative import (
    ConstantParamScheduler,
    ExponentialParamScheduler,
    LinearParamScheduler,
    MultiStepParamScheduler,
    PolyParamScheduler,
    StepParamScheduler,
)
from .plateau import ReduceOnPlateauParamScheduler


class MomentumSchedulerMixin(_FixedParamScheduler):
    """Schedules each group's ``momentum``; for Adam-like optimizers also ``betas[0]``.

    With an optimizer that has ``betas`` but no ``momentum`` (Adam, AdamW, ...)
    each group gets a ``momentum`` key mirroring ``betas[0]``; every value the
    scheduler writes goes to both.
    """

    def __init__(self, optimizer: OptimizerLike, *args: Any, **kwargs: Any) -> None:
        defaults = raw_optimizer(optimizer).defaults
        self.use_betas = False
        if "momentum" not in defaults:
            if "betas" not in defaults:
                raise ValueError(
                    f"{type(self).__name__} needs an optimizer with 'momentum' (e.g. SGD) or "
                    f"'betas' (e.g. Adam); {type(raw_optimizer(optimizer)).__name__} has neither "
                    "(the optimizer must support momentum when using momentum scheduler)"
                )
            self.use_betas = True
            for group in param_groups_owner(optimizer).param_groups:
                group["momentum"] = group["betas"][0]
        super().__init__(optimizer, "momentum", *args, **kwargs)

    def _write(self, group: dict[str, Any], index: int, value: Any) -> None:
        super()._write(group, index, value)
        if self.use_betas:
            group["betas"] = (value, group["betas"][1])


@PARAM_SCHEDULERS.register_module()
class ConstantMomentum(MomentumSchedulerMixin, ConstantParamScheduler):
    """Multiply the momentum by ``factor`` inside ``[begin, end)``."""


@PARAM_SCHEDULERS.register_module()
class StepMomentum(MomentumSchedulerMixin, StepParamScheduler):
    """Decay the momentum by ``gamma`` every ``step_size`` steps."""


@PARAM_SCHEDULERS.register_module()
class MultiStepMomentum(MomentumSchedulerMixin, MultiStepParamScheduler):
    """Decay the momentum by ``gamma`` at each milestone."""


@PARAM_SCHEDULERS.register_module()
class ExponentialMomentum(MomentumSchedulerMixin, ExponentialParamScheduler):
    """Decay the momentum by ``gamma`` every step."""


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingMomentum(MomentumSchedulerMixin, CosineAnnealingParamScheduler):
    """Anneal the momentum to ``eta_min`` along a half cosine of ``T_max`` steps."""


@PARAM_SCHEDULERS.register_module()
class LinearMomentum(MomentumSchedulerMixin, LinearParamScheduler):
    """Ramp the momentum multiplier linearly from ``start_factor`` to ``end_factor``."""


@PARAM_SCHEDULERS.register_module()
class PolyMomentum(MomentumSchedulerMixin, PolyParamScheduler):
    """Decay the momentum polynomially to ``eta_min``."""


@PARAM_SCHEDULERS.register_module()
class CosineRestartMomentum(MomentumSchedulerMixin, CosineRestartParamScheduler):
    """Cosine annealing of the momentum with restarts."""


@PARAM_SCHEDULERS.register_module()
class ReduceOnPlateauMomentum(MomentumSchedulerMixin, ReduceOnPlateauParamScheduler):
    """Reduce the momentum when a validation metric stops improving."""
