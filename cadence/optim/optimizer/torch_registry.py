"""Register torch's optimizers (and the LR schedulers cadence does not reimplement)."""

from __future__ import annotations

import inspect
from typing import Any

import torch

from ...registry import OPTIMIZERS, PARAM_SCHEDULERS
from ...registry.constraints import Rule, declare, validated_by_construction

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

#: The names of torch.optim's optimizer classes, as mmengine lists them (with the base
#: ``Optimizer``, which is not registered: it builds nothing useful).
TORCH_OPTIMIZERS: list[str] = sorted(
    name
    for name, obj in vars(torch.optim).items()
    if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer)
)
#: mmengine registers the optimizers of these optional packages when they are installed;
#: cadence does not import them: name one by its import path instead
#: (``dict(type='dadaptation.DAdaptAdam', ...)``), so these lists stay empty.
DADAPTATION_OPTIMIZERS: list[str] = []
LION_OPTIMIZERS: list[str] = []
SOPHIA_OPTIMIZERS: list[str] = []
BITSANDBYTES_OPTIMIZERS: list[str] = []
TRANSFORMERS_OPTIMIZERS: list[str] = []
NPU_OPTIMIZERS: list[str] = []


def stand_in_parameters() -> dict[str, Any]:
    """What an optimizer is built over when ``cadence check`` runs its validation: one
    2-d parameter (some optimizers, as Muon, take only matrices)."""
    return {"params": [torch.nn.Parameter(torch.zeros(2, 2))]}


def stand_in_optimizer() -> dict[str, Any]:
    """The optimizer a scheduler is built over when ``cadence check`` runs its
    validation and the config gives none it can build."""
    return {"optimizer": torch.optim.SGD(stand_in_parameters()["params"], lr=0.1, momentum=0.9)}


#: a number (a tensor for torch's capturable lr too)
NUMBER = Rule(lambda v: isinstance(v, (int, float, torch.Tensor)) and not isinstance(v, bool),
              "a number")  # fmt: skip
declare(torch.optim.Optimizer, lr=NUMBER, weight_decay=NUMBER, momentum=NUMBER, eps=NUMBER)
# torch's optimizers validate in their constructor (lr >= 0, 0 <= betas < 1, ...), in
# words that name the argument ("Invalid learning rate: -1.0").
validated_by_construction(
    torch.optim.Optimizer, stand_in_parameters,
    aliases={"learning rate": "lr", "epsilon": "eps", "beta": "betas"},
)  # fmt: skip
validated_by_construction(torch.optim.lr_scheduler.LRScheduler, stand_in_optimizer)
