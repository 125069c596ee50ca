"""``build_optim_wrapper``: the ``optim_wrapper`` config of a runner to a wrapper."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from torch import nn
from torch.optim import Optimizer

from ...config.errors import ConfigAssertionError
from ...model.wrappers.utils import unwrap_model
from ...registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIM_WRAPPERS, OPTIMIZERS, config_location
from .default_constructor import DefaultOptimWrapperConstructor, resolve_lazy, shallow_copy
from .nonfinite import add_nonfinite_guard, pop_guard_options
from .optimizer_wrapper import OptimWrapper
from .optimizer_wrapper_dict import OptimWrapperDict
from .torch_registry import (
    BITSANDBYTES_OPTIMIZERS,
    DADAPTATION_OPTIMIZERS,
    LION_OPTIMIZERS,
    NPU_OPTIMIZERS,
    SOPHIA_OPTIMIZERS,
    TORCH_OPTIMIZERS,
    TRANSFORMERS_OPTIMIZERS,
)

#: mmengine's ``optim.optimizer.builder`` also offers these names (the registries, and
#: the lists of registered optimizer names).
__all__ = [
    "BITSANDBYTES_OPTIMIZERS", "DADAPTATION_OPTIMIZERS", "LION_OPTIMIZERS", "NPU_OPTIMIZERS",
    "OPTIMIZERS", "OPTIM_WRAPPER_CONSTRUCTORS", "SOPHIA_OPTIMIZERS", "TORCH_OPTIMIZERS",
    "TRANSFORMERS_OPTIMIZERS", "build_optim_wrapper",
]  # fmt: skip

_SINGLE_KEYS = ("type", "optimizer", "constructor")


def _is_wrapper_cfg(value: Any) -> bool:
    return isinstance(value, Mapping) and ("optimizer" in value or "type" in value)


def build_optim_wrapper(
    model: nn.Module,
    cfg: Mapping[str, Any] | OptimWrapper,
    key_path: str | None = None,
) -> OptimWrapper:
    """Build the optimizer wrapper(s) that ``cfg`` describes for ``model``.

    * An :class:`OptimWrapper` (or :class:`OptimWrapperDict`) is returned as is.
    * ``dict(optimizer=<built torch optimizer>, ...)`` wraps it directly.
    * ``dict(optimizer=dict(...), constructor='Name', paramwise_cfg=dict(...), ...)``
      is handed to the constructor (default ``DefaultOptimWrapperConstructor``),
      which receives the rest as ``optim_wrapper_cfg``. A custom ``constructor``
      also receives configs without ``optimizer`` (multi-optimizer constructors).
    * Without ``type``, ``optimizer`` and ``constructor``, every value must be
      an optim-wrapper config (or a built wrapper): each ``name`` is built over
      ``model.name``'s parameters and they are returned as an
      :class:`OptimWrapperDict` (e.g. ``generator=...``, ``discriminator=...``).

    ``key_path`` names the config in errors (default: the remembered path, else
    ``'optim_wrapper'``).
    """
    if isinstance(cfg, OptimWrapper):
        return cfg
    path = key_path or config_location(cfg)[0] or "optim_wrapper"
    if not isinstance(cfg, Mapping):
        raise TypeError(
            f"{path}: an optimizer wrapper should be a dict (e.g. dict(type='OptimWrapper', "
            f"optimizer=dict(type='SGD', lr=0.01))) or a built OptimWrapper, got "
            f"{type(cfg).__name__}"
        )
    if not any(key in cfg for key in _SINGLE_KEYS):
        return _build_wrapper_dict(model, cfg, path)
    wrapper_cfg = shallow_copy(cfg)
    guard = pop_guard_options(wrapper_cfg)
    if guard is not None:  # skip_nonfinite=True (nonfinite.py)
        return add_nonfinite_guard(build_optim_wrapper(model, wrapper_cfg, path), guard)
    optimizer = wrapper_cfg.get("optimizer")
    if isinstance(optimizer, Optimizer):
        if "constructor" in wrapper_cfg or "paramwise_cfg" in wrapper_cfg:
            raise ValueError(
                f"{path}.optimizer is an already built optimizer, so 'constructor' and "
                "'paramwise_cfg' cannot apply; give optimizer=dict(type=...) instead"
            )
        if "type" not in wrapper_cfg:
            wrapper_cfg["type"] = "OptimWrapper"
        return OPTIM_WRAPPERS.build(wrapper_cfg, key_path=path)
    constructor_type = resolve_lazy(
        wrapper_cfg.pop("constructor", "DefaultOptimWrapperConstructor")
    )
    paramwise_cfg = wrapper_cfg.pop("paramwise_cfg", None)
    constructor_cls = _constructor_class(
        constructor_type, f"{path}.constructor", config_location(cfg)[1]
    )
    if "optimizer" not in wrapper_cfg and issubclass_safe(
        constructor_cls, DefaultOptimWrapperConstructor
    ):
        keys = ", ".join(map(repr, cfg)) or "nothing"
        raise KeyError(
            f"{path} needs an 'optimizer' key, e.g. optimizer=dict(type='SGD', lr=0.01) "
            f"(it has {keys}); for several optimizers give one config per sub-model "
            "without 'type' and 'constructor', e.g. generator=dict(optimizer=...), "
            "discriminator=dict(optimizer=...)"
        )
    constructor_cfg: dict[str, Any] = {
        "type": constructor_cls,
        "optim_wrapper_cfg": wrapper_cfg,
        "paramwise_cfg": paramwise_cfg,
    }
    if _accepts_key_path(constructor_cls):
        constructor_cfg["key_path"] = path
    constructor = OPTIM_WRAPPER_CONSTRUCTORS.build(constructor_cfg, key_path=f"{path}.constructor")
    wrapper = constructor(model)
    if not isinstance(wrapper, OptimWrapper):
        raise TypeError(
            f"{path}.constructor {getattr(constructor_cls, '__name__', constructor_cls)} "
            f"returned {type(wrapper).__name__}, expected an OptimWrapper or OptimWrapperDict"
        )
    return wrapper


def _build_wrapper_dict(model: nn.Module, cfg: Mapping[str, Any], path: str) -> OptimWrapperDict:
    if not cfg:
        raise ConfigAssertionError(
            f"{path} is empty: `optim_wrapper_cfg` must contain 'optimizer', 'type' or "
            "'constructor' (give it optimizer=dict(type=..., lr=...))"
        )
    owner = unwrap_model(model)  # DDP & co., not a model's own .module
    wrappers: dict[str, OptimWrapper] = {}
    for name, sub_cfg in cfg.items():
        sub_path = f"{path}.{name}"
        if isinstance(sub_cfg, OptimWrapper):
            wrappers[name] = sub_cfg
            continue
        if not _is_wrapper_cfg(sub_cfg):
            raise ValueError(
                f"{path} has no 'optimizer', 'type' or 'constructor', so each of its values must "
                f"be the optim-wrapper config of one sub-model (a dict with 'optimizer' or "
                f"'type') or a built OptimWrapper; {sub_path} is {sub_cfg!r}. For one optimizer "
                "write optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.01))"
            )
        sub_model = getattr(owner, name, None)
        if not isinstance(sub_model, nn.Module):
            children = [n for n, _ in owner.named_children()]
            raise AttributeError(
                f"{sub_path} builds an optimizer for model.{name}, but the model has no "
                f"sub-module {name!r}; its sub-modules are {', '.join(children) or 'none'}"
            )
        wrappers[name] = build_optim_wrapper(sub_model, sub_cfg, key_path=sub_path)
    return OptimWrapperDict(**wrappers)


def _constructor_class(constructor_type: Any, key_path: str, origin: str | None) -> Any:
    if isinstance(constructor_type, str):
        with OPTIM_WRAPPER_CONSTRUCTORS.switch_scope_and_registry(None) as registry:
            return registry.lookup(constructor_type, key_path=key_path, origin=origin)
    if not callable(constructor_type):
        raise TypeError(
            f"{key_path} must be a registered name or a class, got {constructor_type!r}"
        )
    return constructor_type


def issubclass_safe(obj: Any, cls: type) -> bool:
    """``issubclass`` that answers False for non-classes."""
    return isinstance(obj, type) and issubclass(obj, cls)


def _accepts_key_path(constructor_cls: Any) -> bool:
    if not issubclass_safe(constructor_cls, DefaultOptimWrapperConstructor):
        return False
    try:
        return "key_path" in inspect.signature(constructor_cls).parameters
    except (TypeError, ValueError):
        return False
