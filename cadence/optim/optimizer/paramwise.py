"""Per-parameter optimizer options (``paramwise_cfg``), with mmengine's rules."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Mapping
from numbers import Real
from typing import Any, ClassVar

from torch import nn

from ...logging import print_log
from ...utils import did_you_mean

NORM_LAYERS = (
    nn.modules.batchnorm._BatchNorm,
    nn.modules.instancenorm._InstanceNorm,
    nn.GroupNorm,
    nn.LayerNorm,
)
# mmcv's deformable convolutions, recognised by class name so mmcv is not imported.
_DCN_CLASS_NAMES = frozenset({"DeformConv2d", "ModulatedDeformConv2d"})
_MULTIPLIERS = (
    "bias_lr_mult", "bias_decay_mult", "norm_decay_mult",
    "dwconv_decay_mult", "flat_decay_mult", "dcn_offset_lr_mult",
)  # fmt: skip


def _is_dcn(module: nn.Module) -> bool:
    return any(cls.__name__ in _DCN_CLASS_NAMES for cls in type(module).__mro__)


class ParamwiseRules:
    """Turn a module tree into one optimizer param group per parameter.

    Args:
        cfg: the ``paramwise_cfg`` dict (see :class:`DefaultOptimWrapperConstructor`).
        base_lr: the optimizer's ``lr`` (``None`` when the config has none).
        base_wd: the optimizer's ``weight_decay`` (``None`` when unset).
        key_path: where ``cfg`` sits in the config, for errors.
        strict: reject keys this class does not know.
    """

    KEYS: ClassVar[frozenset[str]] = frozenset({*_MULTIPLIERS, "custom_keys", "bypass_duplicate"})

    def __init__(
        self,
        cfg: Mapping[str, Any],
        *,
        base_lr: float | None,
        base_wd: float | None,
        key_path: str = "optim_wrapper.paramwise_cfg",
        strict: bool = True,
    ) -> None:
        self.key_path = key_path
        self.base_lr = base_lr
        self.base_wd = base_wd
        if strict:
            for key in cfg:
                if key not in self.KEYS:
                    raise ValueError(
                        f"{key_path} has unknown key {key!r}; accepted keys: "
                        f"{', '.join(sorted(self.KEYS))}.{did_you_mean(str(key), self.KEYS)}"
                    )
        self.mults: dict[str, float | None] = {}
        for name in _MULTIPLIERS:
            value = cfg.get(name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, Real)):
                raise TypeError(f"{key_path}.{name} must be a number, got {value!r}")
            self.mults[name] = None if value is None else float(value)
        self.bypass_duplicate = bool(cfg.get("bypass_duplicate", False))
        self.custom_keys = self._check_custom_keys(cfg.get("custom_keys", {}))
        # Longest key first; equal lengths in alphabetical order (as mmengine).
        self.sorted_keys = sorted(sorted(self.custom_keys), key=len, reverse=True)
        self._check_bases()
        self._used_keys: set[str] = set()

    def _check_custom_keys(self, custom_keys: Any) -> dict[str, Mapping[str, Any]]:
        if not isinstance(custom_keys, Mapping):
            raise TypeError(
                f"{self.key_path}.custom_keys must be a dict of name -> options, "
                f"got {type(custom_keys).__name__}"
            )
        for key, options in custom_keys.items():
            if not isinstance(key, str) or not isinstance(options, Mapping):
                raise TypeError(
                    f"{self.key_path}.custom_keys entries must be 'name': dict(lr_mult=..., "
                    f"decay_mult=...), got {key!r}: {options!r}"
                )
        return dict(custom_keys)

    def _check_bases(self) -> None:
        needs_wd = [n for n in ("bias_decay_mult", "norm_decay_mult", "dwconv_decay_mult")
                    if self.mults[n] is not None]  # fmt: skip
        needs_wd += [f"custom_keys.{k}.decay_mult" for k, o in self.custom_keys.items()
                     if "decay_mult" in o]  # fmt: skip
        if needs_wd and self.base_wd is None:
            raise ValueError(
                f"{self.key_path}: {', '.join(needs_wd)} multiplies the optimizer's weight_decay, "
                "but the optimizer config sets none; add weight_decay=... to it"
            )
        needs_lr = [n for n in ("bias_lr_mult", "dcn_offset_lr_mult") if self.mults[n] is not None]
        needs_lr += [f"custom_keys.{k}.lr_mult" for k, o in self.custom_keys.items()
                     if "lr_mult" in o]  # fmt: skip
        if needs_lr and self.base_lr is None:
            raise ValueError(
                f"{self.key_path}: {', '.join(needs_lr)} multiplies the optimizer's lr, "
                "but the optimizer config sets none; add lr=... to it"
            )

    # ------------------------------------------------------------ grouping
    def add_params(
        self,
        params: list[dict[str, Any]],
        module: nn.Module,
        prefix: str = "",
        is_dcn: bool = False,
    ) -> None:
        """Append a group for every parameter of ``module`` and its children to ``params``."""
        added = {id(p) for group in params for p in group["params"]}
        self._add(params, added, module, prefix, is_dcn)

    def _add(
        self,
        params: list[dict[str, Any]],
        added: set[int],
        module: nn.Module,
        prefix: str,
        is_dcn: bool,
    ) -> None:
        for name, param in module.named_parameters(recurse=False):
            full_name = f"{prefix}.{name}" if prefix else name
            if id(param) in added:
                if self.bypass_duplicate:
                    print_log(
                        f"{full_name} is a parameter already given to the optimizer; skipped "
                        "because bypass_duplicate=True",
                        logger="current",
                        level=logging.WARNING,
                    )
                    continue
                raise ValueError(
                    f"parameter {full_name} is shared with a module seen earlier, so it would be "
                    f"in two param groups; set {self.key_path}.bypass_duplicate=True to skip "
                    "the repeats (some parameters appear in more than one parameter group)"
                )
            if not param.requires_grad:
                continue
            group = self.group_for(module, name, param, f"{prefix}.{name}", is_dcn)
            params.append(group)
            added.add(id(param))
        child_is_dcn = _is_dcn(module)
        for child_name, child in module.named_children():
            child_prefix = f"{prefix}.{child_name}" if prefix else child_name
            self._add(params, added, child, child_prefix, child_is_dcn)

    def group_for(
        self, module: nn.Module, name: str, param: nn.Parameter, match_name: str, is_dcn: bool
    ) -> dict[str, Any]:
        """The param group of ``param`` (``module``'s parameter ``name``)."""
        group: dict[str, Any] = {"params": [param]}
        base_lr, base_wd, mults = self.base_lr, self.base_wd, self.mults
        for key in self.sorted_keys:
            if key in match_name:
                options = self.custom_keys[key]
                self._used_keys.add(key)
                if base_lr is not None:
                    group["lr"] = base_lr * options.get("lr_mult", 1.0)
                if base_wd is not None:
                    group["weight_decay"] = base_wd * options.get("decay_mult", 1.0)
                group.update(options)
                return group
        is_norm = isinstance(module, NORM_LAYERS)
        is_bias = name == "bias"
        if is_bias and not (is_norm or is_dcn) and mults["bias_lr_mult"] is not None:
            group["lr"] = base_lr * mults["bias_lr_mult"]  # type: ignore[operator]
        offset_mult = mults["dcn_offset_lr_mult"]
        if is_dcn and offset_mult is not None and "conv_offset" in match_name:
            if isinstance(module, nn.Conv2d):
                group["lr"] = base_lr * offset_mult  # type: ignore[operator]
        if base_wd is not None:
            is_dwconv = isinstance(module, nn.Conv2d) and module.in_channels == module.groups
            if is_norm and mults["norm_decay_mult"] is not None:
                group["weight_decay"] = base_wd * mults["norm_decay_mult"]
            elif is_bias and not is_dcn and mults["bias_decay_mult"] is not None:
                group["weight_decay"] = base_wd * mults["bias_decay_mult"]
            elif is_dwconv and mults["dwconv_decay_mult"] is not None:
                group["weight_decay"] = base_wd * mults["dwconv_decay_mult"]
            elif param.ndim == 1 and not is_dcn and mults["flat_decay_mult"] is not None:
                group["weight_decay"] = base_wd * mults["flat_decay_mult"]
        return group

    def warn_unused_keys(self) -> None:
        """Warn about ``custom_keys`` that matched no parameter name (likely typos)."""
        unused = [k for k in self.sorted_keys if k not in self._used_keys]
        if unused:
            warnings.warn(
                f"{self.key_path}.custom_keys {', '.join(map(repr, unused))} matched no "
                "trainable parameter name",
                stacklevel=3,
            )
        self._used_keys.clear()
