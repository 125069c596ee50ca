"""Parameter schedulers with OpenMMLab semantics (begin/end/by_epoch).

Every class is registered in ``PARAM_SCHEDULERS`` under its own name, so
``dict(type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500)``
builds with :func:`build_param_schedulers`.
"""

from ...registry.constraints import validated_by_construction
from ..optimizer.torch_registry import stand_in_optimizer
from .base import INF, _ParamScheduler
from .builder import build_param_schedulers, build_scheduler_from_cfg
from .cosine import CosineAnnealingParamScheduler, CosineRestartParamScheduler
from .lr_scheduler import (
    ConstantLR,
    CosineAnnealingLR,
    CosineRestartLR,
    ExponentialLR,
    LinearLR,
    LRSchedulerMixin,
    MultiStepLR,
    OneCycleLR,
    PolyLR,
    ReduceOnPlateauLR,
    StepLR,
)
from .momentum_scheduler import (
    ConstantMomentum,
    CosineAnnealingMomentum,
    CosineRestartMomentum,
    ExponentialMomentum,
    LinearMomentum,
    MomentumSchedulerMixin,
    MultiStepMomentum,
    PolyMomentum,
    ReduceOnPlateauMomentum,
    StepMomentum,
)
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

__all__ = [
    "INF", "_ParamScheduler", "build_param_schedulers", "build_scheduler_from_cfg",
    "LRSchedulerMixin", "MomentumSchedulerMixin",
    "ConstantParamScheduler", "StepParamScheduler", "MultiStepParamScheduler",
    "ExponentialParamScheduler", "CosineAnnealingParamScheduler", "LinearParamScheduler",
    "PolyParamScheduler", "OneCycleParamScheduler", "CosineRestartParamScheduler",
    "ReduceOnPlateauParamScheduler",
    "ConstantLR", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR",
    "PolyLR", "OneCycleLR", "CosineRestartLR", "ReduceOnPlateauLR",
    "ConstantMomentum", "StepMomentum", "MultiStepMomentum", "ExponentialMomentum",
    "CosineAnnealingMomentum", "LinearMomentum", "PolyMomentum", "CosineRestartMomentum",
    "ReduceOnPlateauMomentum",
]  # fmt: skip

# Building a scheduler over a stand-in optimizer is cheap and touches nothing else, so
# `cadence check` runs each scheduler's own validation that way.
validated_by_construction(_ParamScheduler, stand_in_optimizer)
