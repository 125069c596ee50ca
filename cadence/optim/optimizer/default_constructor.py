"""``DefaultOptimWrapperConstructor``: a model plus a config to an optimizer wrapper."""

from __future__ import annotations

import copy
import inspect
from collections.abc import Mapping
from typing import Any

from torch import nn

from ...model.wrappers.utils import unwrap_model
from ...registry import OPTIM_WRAPPER_CONSTRUCTORS, OPTIM_WRAPPERS, OPTIMIZERS, config_location
from .optimizer_wrapper import OptimWrapper
from .paramwise import ParamwiseRules


def shallow_copy(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy of a config dict that keeps a loaded node's key path and origin."""
    return copy.copy(cfg) if isinstance(cfg, dict) else dict(cfg)


def resolve_lazy(obj: Any) -> Any:
    """Return the object a lazily imported config value stands for (else ``obj``)."""
    build = getattr(obj, "__cadence_lazy_build__", None)
    return build() if callable(build) else obj


@OPTIM_WRAPPER_CONSTRUCTORS.register_module()
class DefaultOptimWrapperConstructor:
    """Build an :class:`OptimWrapper` for a model from ``optim_wrapper`` config.

    Args:
        optim_wrapper_cfg: the wrapper config: ``optimizer=dict(type=..., lr=...)``
            plus the wrapper's own arguments (``type`` defaults to
            ``'OptimWrapper'``, ``accumulative_counts``, ``clip_grad``, ...).
        paramwise_cfg: per-parameter options; without it every parameter of
            the model goes into one group. Keys: ``custom_keys``
            (``{'backbone': dict(lr_mult=0.1, decay_mult=1.0)}``; a parameter
            whose full name contains the key, longest key first; other keys of
            the dict are copied into its group), ``bias_lr_mult``,
            ``bias_decay_mult``, ``norm_decay_mult``, ``dwconv_decay_mult``,
            ``flat_decay_mult``, ``dcn_offset_lr_mult`` and ``bypass_duplicate``.
        key_path: where the config sits (``'optim_wrapper'``), for errors.

    With ``paramwise_cfg`` each parameter gets its own group and, as in
    mmengine, parameters with ``requires_grad=False`` are left out; without
    it the optimizer receives ``model.parameters()`` (frozen ones included).
    Subclasses may use paramwise keys of their own: they stay in
    ``self.paramwise_cfg`` for them, and only this class itself (not a
    subclass) rejects keys it does not know.
    """

    def __init__(
        self,
        optim_wrapper_cfg: Mapping[str, Any],
        paramwise_cfg: Mapping[str, Any] | None = None,
        *,
        key_path: str | None = None,
    ) -> None:
        self.key_path = key_path or config_location(optim_wrapper_cfg)[0] or "optim_wrapper"
        if not isinstance(optim_wrapper_cfg, Mapping):
            raise TypeError(
                f"{self.key_path} must be a dict with an 'optimizer' key, "
                f"got {type(optim_wrapper_cfg).__name__}"
            )
        if "optimizer" not in optim_wrapper_cfg:
            keys = ", ".join(map(repr, optim_wrapper_cfg)) or "nothing"
            raise KeyError(
                f"{self.key_path} needs an 'optimizer' key, e.g. optimizer=dict(type='SGD', "
                f"lr=0.01); it has {keys}"
            )
        self.optim_wrapper_cfg = shallow_copy(optim_wrapper_cfg)
        self.optimizer_cfg = self.optim_wrapper_cfg.pop("optimizer")
        if not isinstance(self.optimizer_cfg, Mapping):
            raise TypeError(
                f"{self.key_path}.optimizer must be a dict with a 'type' key, "
                f"got {type(self.optimizer_cfg).__name__}"
            )
        if paramwise_cfg is not None and not isinstance(paramwise_cfg, Mapping):
            raise TypeError(
                f"{self.key_path}.paramwise_cfg must be None or a dict, "
                f"got {type(paramwise_cfg).__name__}"
            )
        self.paramwise_cfg: dict[str, Any] = dict(paramwise_cfg or {})
        self.base_lr = self.optimizer_cfg.get("lr", None)
        self.base_wd = self.optimizer_cfg.get("weight_decay", None)
        self._rules: ParamwiseRules | None = None
        if self.paramwise_cfg:
            own_keys_only = type(self) is DefaultOptimWrapperConstructor
            self._rules = ParamwiseRules(
                self.paramwise_cfg,
                base_lr=self.base_lr,
                base_wd=self.base_wd,
                key_path=f"{self.key_path}.paramwise_cfg",
                strict=own_keys_only,
            )

    def add_params(
        self,
        params: list[dict[str, Any]],
        module: nn.Module,
        prefix: str = "",
        is_dcn_module: int | float | None = None,
    ) -> None:
        """Append one group per parameter of ``module`` (recursively) to ``params``."""
        rules = self._rules or ParamwiseRules(
            {}, base_lr=self.base_lr, base_wd=self.base_wd, key_path=self.key_path
        )
        rules.add_params(params, module, prefix, bool(is_dcn_module))

    def __call__(self, model: nn.Module) -> OptimWrapper:
        """Build the optimizer over ``model``'s parameters and wrap it."""
        model = unwrap_model(model)  # DDP & co., not a model's own .module
        if not isinstance(model, nn.Module):
            raise TypeError(f"{self.key_path}: expected an nn.Module, got {type(model).__name__}")
        optimizer_cfg = shallow_copy(self.optimizer_cfg)
        remembered, origin = config_location(self.optimizer_cfg)
        optimizer_path = remembered or f"{self.key_path}.optimizer"
        optimizer_cls = self._optimizer_class(optimizer_cfg, optimizer_path, origin)
        optimizer_cfg["type"] = optimizer_cls
        params: Any
        if self.paramwise_cfg:
            params = []
            self.add_params(params, model)
            if self._rules is not None:
                self._rules.warn_unused_keys()
        else:
            params = model.parameters()
        # Given as a default argument so that the config node (and where it was
        # defined, for errors) is kept as it is.
        optimizer = OPTIMIZERS.build(
            optimizer_cfg,
            default_args={_first_argument(optimizer_cls): params},
            key_path=optimizer_path,
        )
        wrapper_cfg = shallow_copy(self.optim_wrapper_cfg)
        if "type" not in wrapper_cfg:
            wrapper_cfg["type"] = "OptimWrapper"
        return OPTIM_WRAPPERS.build(
            wrapper_cfg, default_args={"optimizer": optimizer}, key_path=self.key_path
        )

    @staticmethod
    def _optimizer_class(cfg: Mapping[str, Any], key_path: str, origin: str | None) -> Any:
        if "type" not in cfg:
            raise KeyError(
                f"{key_path} has no 'type'; set it to an optimizer name such as 'SGD' or 'AdamW'"
            )
        opt_type = resolve_lazy(cfg["type"])
        if not isinstance(opt_type, str):
            if not callable(opt_type):
                raise TypeError(f"{key_path}.type must be a name or a class, got {opt_type!r}")
            return opt_type
        with OPTIMIZERS.switch_scope_and_registry(cfg.get("_scope_")) as registry:
            return registry.lookup(opt_type, key_path=key_path, origin=origin)


def _first_argument(optimizer_cls: Any) -> str:
    """Name of the argument that receives the parameters (``params`` for torch)."""
    try:
        parameters = inspect.signature(optimizer_cls).parameters
    except (TypeError, ValueError):
        return "params"
    for name, param in parameters.items():
        if param.kind in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            return name
    return "params"
