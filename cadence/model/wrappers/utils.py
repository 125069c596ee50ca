"""``is_model_wrapper``: whether a module wraps the user's model (and has it as ``.module``)."""

from __future__ import annotations

import sys

from torch import nn
from torch.nn.parallel import DataParallel, DistributedDataParallel

from ...registry import MODEL_WRAPPERS, Registry


def _torch_wrappers() -> tuple[type, ...]:
    """torch's wrappers: DataParallel, DDP and, once torch's FSDP module is loaded, FSDP."""
    found: list[type] = [DataParallel, DistributedDataParallel]
    fsdp = sys.modules.get("torch.distributed.fsdp")  # a model wrapped in FSDP has loaded it
    fsdp_class = getattr(fsdp, "FullyShardedDataParallel", None)
    if isinstance(fsdp_class, type):
        found.append(fsdp_class)
    return tuple(found)


def _registered(registry: Registry) -> tuple[type, ...]:
    """The classes registered in ``registry`` and in its children, recursively."""
    found = [obj for obj in registry.module_dict.values() if isinstance(obj, type)]
    for child in registry.children.values():
        found.extend(_registered(child))
    return tuple(found)


def is_model_wrapper(model: nn.Module, registry: Registry = MODEL_WRAPPERS) -> bool:
    """Whether ``model`` is a model wrapper, whose ``.module`` is the wrapped model.

    Wrappers are every class registered in ``registry`` and in its children (cadence's
    DDP and DeepSpeed wrappers, and your own) and, when ``registry`` is the root
    ``MODEL_WRAPPERS`` (where mmengine registers them), torch's ``DataParallel``,
    ``DistributedDataParallel`` and ``FullyShardedDataParallel`` (and subclasses). A
    module sharded in place by FSDP2's ``fully_shard`` is the model itself, not a wrapper.
    """
    if registry is MODEL_WRAPPERS and isinstance(model, _torch_wrappers()):
        return True
    return isinstance(model, _registered(registry))


def unwrap_model(model: nn.Module) -> nn.Module:
    """The user's model: ``model.module`` when ``model`` is a wrapper (:func:`is_model_wrapper`),
    else ``model`` itself (a model's own submodule called ``module`` stays where it is)."""
    if is_model_wrapper(model):
        inner = model.module
        assert isinstance(inner, nn.Module)
        return inner
    return model
