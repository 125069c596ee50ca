"""Optimizer wrappers, their constructor, and torch's optimizers by name."""

from ...registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIMIZERS
from .amp_optimizer_wrapper import AmpOptimWrapper
from .base import BaseOptimWrapper
from .builder import build_optim_wrapper
from .clip import GradClipper
from .default_constructor import DefaultOptimWrapperConstructor
from .nonfinite import NonFiniteGuard, NonFiniteStepsError
from .optimizer_wrapper import OptimWrapper
from .optimizer_wrapper_dict import OptimWrapperDict, accumulation_pending
from .paramwise import ParamwiseRules
from .torch_registry import register_torch_lr_schedulers, register_torch_optimizers

__all__ = [
    "AmpOptimWrapper", "BaseOptimWrapper", "DefaultOptimWrapperConstructor", "GradClipper",
    "OptimWrapper", "OptimWrapperDict", "ParamwiseRules", "build_optim_wrapper",
    "accumulation_pending", "register_torch_lr_schedulers", "register_torch_optimizers",
]  # fmt: skip
__all__ += ["NonFiniteGuard", "NonFiniteStepsError", "OPTIM_WRAPPER_CONSTRUCTORS", "OPTIMIZERS"]
