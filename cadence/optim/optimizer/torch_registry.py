"""Register torch's optimizers (and the LR schedulers cadence does not reimplement)."""

from __future__ import annotations

import inspect

import torch

from ...registry import OPTIMIZERS, PARAM_SCHEDULERS

# cadence's own schedulers (begin/end/by_epoch semantics) take these names, so
# torch's classes of the same names stay reachable only by full path
# ('torch.optim.lr_scheduler.StepLR').
RESERVED_SCHEDULER_NAMES = frozenset(
    {
        "ConstantLR", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
        "LinearLR", "PolyLR", "OneCycleLR", "CosineRestartLR", "ReduceOnPlateauLR",
    }
)  # fmt: skip


# Extra names mmengine configs use for torch optimizers (mmengine keeps 'Adafactor'
# for the transformers class and registers torch's as 'TorchAdafactor').
OPTIMIZER_ALIASES = {"TorchAdafactor": "Adafactor"}


def register_torch_optimizers() -> list[str]:
    """Register every ``torch.optim.Optimizer`` subclass by its class name (and aliases)."""
    names = []
    for name, obj in vars(torch.optim).items():
        if (
            inspect.isclass(obj)
            and issubclass(obj, torch.optim.Optimizer)
            and obj is not torch.optim.Optimizer
            and name not in OPTIMIZERS.module_dict
        ):
            OPTIMIZERS.register_module(name=name, module=obj)
            names.append(name)
    for alias, name in OPTIMIZER_ALIASES.items():
        obj = getattr(torch.optim, name, None)
        if obj is not None and alias not in OPTIMIZERS.module_dict:
            OPTIMIZERS.register_module(name=alias, module=obj)
            names.append(alias)
    return names


def register_torch_lr_schedulers() -> list[str]:
    """Register torch LR schedulers whose names cadence does not use for its own."""
    base = torch.optim.lr_scheduler.LRScheduler
    names = []
    for name, obj in vars(torch.optim.lr_scheduler).items():
        if (
            inspect.isclass(obj)
            and (issubclass(obj, base) or name == "ReduceLROnPlateau")
            and obj is not base
            and not name.startswith("_")
            and name not in RESERVED_SCHEDULER_NAMES
            and name not in PARAM_SCHEDULERS.module_dict
        ):
            PARAM_SCHEDULERS.register_module(name=name, module=obj)
            names.append(name)
    return names


register_torch_optimizers()
register_torch_lr_schedulers()
