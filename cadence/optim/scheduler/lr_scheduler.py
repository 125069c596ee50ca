"""Learning-rate schedulers: the parameter schedulers with ``param_name='lr'``."""

from __future__ import annotations

from typing import Any

from ...registry import PARAM_SCHEDULERS
from .base import OptimizerLike, _FixedParamScheduler
from .cosine import CosineAnnealingParamScheduler, CosineRestartParamScheduler
from .multiplicative import (
    ConstantParamScheduler,
    ExponentialParamScheduler,
    LinearParamScheduler,
    MultiStepParamScheduler,
    PolyParamScheduler,
    StepParamScheduler,
)
from .one_cycle import OneCycleParamScheduler
from .plateau import ReduceOnPlateauParamScheduler


class LRSchedulerMixin(_FixedParamScheduler):
    """Schedules each parameter group's ``lr``; the other arguments are the family's."""

    def __init__(self, optimizer: OptimizerLike, *args: Any, **kwargs: Any) -> None:
        super().__init__(optimizer, "lr", *args, **kwargs)


@PARAM_SCHEDULERS.register_module()
class ConstantLR(LRSchedulerMixin, ConstantParamScheduler):
    """Multiply the learning rate by ``factor`` inside ``[begin, end)``."""


@PARAM_SCHEDULERS.register_module()
class StepLR(LRSchedulerMixin, StepParamScheduler):
    """Decay the learning rate by ``gamma`` every ``step_size`` steps."""


@PARAM_SCHEDULERS.register_module()
class MultiStepLR(LRSchedulerMixin, MultiStepParamScheduler):
    """Decay the learning rate by ``gamma`` at each milestone."""


@PARAM_SCHEDULERS.register_module()
class ExponentialLR(LRSchedulerMixin, ExponentialParamScheduler):
    """Decay the learning rate by ``gamma`` every step."""


@PARAM_SCHEDULERS.register_module()
class CosineAnnealingLR(LRSchedulerMixin, CosineAnnealingParamScheduler):
    """Anneal the learning rate to ``eta_min`` along a half cosine of ``T_max`` steps."""


@PARAM_SCHEDULERS.register_module()
class LinearLR(LRSchedulerMixin, LinearParamScheduler):
    """Ramp the learning-rate multiplier linearly from ``start_factor`` to ``end_factor``."""


@PARAM_SCHEDULERS.register_module()
class PolyLR(LRSchedulerMixin, PolyParamScheduler):
    """Decay the learning rate polynomially to ``eta_min``."""


@PARAM_SCHEDULERS.register_module()
class OneCycleLR(LRSchedulerMixin, OneCycleParamScheduler):
    """The 1cycle learning-rate policy."""


@PARAM_SCHEDULERS.register_module()
class CosineRestartLR(LRSchedulerMixin, CosineRestartParamScheduler):
    """Cosine annealing of the learning rate with restarts."""


@PARAM_SCHEDULERS.register_module()
class ReduceOnPlateauLR(LRSchedulerMixin, ReduceOnPlateauParamScheduler):
    """Reduce the learning rate when a validation metric stops improving."""
