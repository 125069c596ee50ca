"""Weight initialisers selected by ``init_cfg`` (mmengine's names and arguments).

``init_cfg=dict(type='Normal', layer='Linear', std=0.01)`` initialises every
``nn.Linear`` below the module; ``layer`` matches a module's class name or
the names of its direct base classes. ``override=dict(name='head', ...)``
initialises the named child as a whole. ``Pretrained`` loads a local
checkpoint and is always applied last.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from ..logging import print_log
from ..registry import WEIGHT_INITIALIZERS
from .init_functions import (  # noqa: F401  (mmengine.model.weight_init's names)
    caffe2_xavier_init,
    constant_init,
    kaiming_init,
    normal_init,
    trunc_normal_,
    trunc_normal_init,
    uniform_init,
    xavier_init,
)


def bias_init_with_prob(prior_prob: float) -> float:
    """The bias whose sigmoid is ``prior_prob`` (focal-loss style prior)."""
    return float(-math.log((1 - prior_prob) / prior_prob))


def _fill(module: nn.Module, weight_fn: Callable[[torch.Tensor], Any], bias: float) -> None:
    weight = getattr(module, "weight", None)
    if isinstance(weight, torch.Tensor):
        weight_fn(weight)
    bias_param = getattr(module, "bias", None)
    if isinstance(bias_param, torch.Tensor):
        nn.init.constant_(bias_param, bias)


def _layer_names(module: nn.Module) -> set[str]:
    cls = type(module)
    return {cls.__name__, *(base.__name__ for base in cls.__bases__)}


class BaseInit:
    """Common arguments: ``bias`` (or ``bias_prob``) and the ``layer`` names to initialise."""

    def __init__(
        self,
        *,
        bias: float = 0,
        bias_prob: float | None = None,
        layer: str | list[str] | None = None,
    ) -> None:
        if not isinstance(bias, (int, float)):
            raise TypeError(f"bias must be a number, got {type(bias).__name__}")
        if bias_prob is not None and not isinstance(bias_prob, float):
            raise TypeError(f"bias_prob must be a float, got {type(bias_prob).__name__}")
        if layer is not None and not isinstance(layer, (str, list)):
            raise TypeError(f"layer must be a str or a list of str, got {type(layer).__name__}")
        self.bias = bias_init_with_prob(bias_prob) if bias_prob is not None else bias
        self.layer = [layer] if isinstance(layer, str) else list(layer or [])
        self.wholemodule = False

    def init_weight(self, weight: torch.Tensor) -> None:
        """Fill one weight tensor in place."""
        raise NotImplementedError

    def __call__(self, module: nn.Module) -> None:
        wanted = set(self.layer)

        def visit(m: nn.Module) -> None:
            if self.wholemodule or wanted & _layer_names(m):
                _fill(m, self.init_weight, self.bias)

        module.apply(visit)


@WEIGHT_INITIALIZERS.register_module(name="Constant")
class ConstantInit(BaseInit):
    """Weights set to ``val``."""

    def __init__(self, val: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.val = val

    def init_weight(self, weight: torch.Tensor) -> None:
        nn.init.constant_(weight, self.val)


@WEIGHT_INITIALIZERS.register_module(name="Normal")
class NormalInit(BaseInit):
    """Weights drawn from N(mean, std²)."""

    def __init__(self, mean: float = 0, std: float = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mean, self.std = mean, std

    def init_weight(self, weight: torch.Tensor) -> None:
        nn.init.normal_(weight, self.mean, self.std)


@WEIGHT_INITIALIZERS.register_module(name="TruncNormal")
class TruncNormalInit(BaseInit):
    """Weights drawn from N(mean, std²) truncated to [a, b]."""

    def __init__(
        self, mean: float = 0, std: float = 1, a: float = -2, b: float = 2, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.mean, self.std, self.a, self.b = mean, std, a, b

    def init_weight(self, weight: torch.Tensor) -> None:
        trunc_normal_(weight, self.mean, self.std, self.a, self.b)  # mmengine's draws


@WEIGHT_INITIALIZERS.register_module(name="Uniform")
class UniformInit(BaseInit):
    """Weights drawn from U(a, b)."""

    def __init__(self, a: float = 0, b: float = 1, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.a, self.b = a, b

    def init_weight(self, weight: torch.Tensor) -> None:
        nn.init.uniform_(weight, self.a, self.b)


def _check_distribution(distribution: str) -> str:
    if distribution not in ("normal", "uniform"):
        raise ValueError(f"distribution must be 'normal' or 'uniform', got {distribution!r}")
    return distribution


@WEIGHT_INITIALIZERS.register_module(name="Xavier")
class XavierInit(BaseInit):
    """Glorot initialisation with ``gain``, normal or uniform."""

    def __init__(self, gain: float = 1, distribution: str = "normal", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.gain = gain
        self.distribution = _check_distribution(distribution)

    def init_weight(self, weight: torch.Tensor) -> None:
        if self.distribution == "uniform":
            nn.init.xavier_uniform_(weight, gain=self.gain)
        else:
            nn.init.xavier_normal_(weight, gain=self.gain)


@WEIGHT_INITIALIZERS.register_module(name="Kaiming")
class KaimingInit(BaseInit):
    """He initialisation (defaults as mmengine: fan_out, relu, normal)."""

    def __init__(
        self,
        a: float = 0,
        mode: str = "fan_out",
        nonlinearity: str = "relu",
        distribution: str = "normal",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.a, self.mode, self.nonlinearity = a, mode, nonlinearity
        self.distribution = _check_distribution(distribution)

    def init_weight(self, weight: torch.Tensor) -> None:
        init = (
            nn.init.kaiming_uniform_ if self.distribution == "uniform" else nn.init.kaiming_normal_
        )
        init(weight, a=self.a, mode=self.mode, nonlinearity=self.nonlinearity)  # type: ignore[arg-type]


@WEIGHT_INITIALIZERS.register_module(name="Caffe2Xavier")
class Caffe2XavierInit(KaimingInit):
    """Caffe2's XavierFill: Kaiming uniform, fan_in, leaky_relu with a=1."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            a=1, mode="fan_in", nonlinearity="leaky_relu", distribution="uniform", **kwargs
        )


@WEIGHT_INITIALIZERS.register_module(name="Pretrained")
class PretrainedInit:
    """Load weights from a local checkpoint file (non-strict).

    Args:
        checkpoint: path of a file saved with ``torch.save``; a ``state_dict``
            (or ``model``) entry is used when present, and a leading
            ``module.`` is stripped from keys.
        prefix: load only keys starting with it, with the prefix removed
            (e.g. ``'backbone.'``).
        map_location: passed to ``torch.load``.
    """

    def __init__(
        self, checkpoint: str, prefix: str | None = None, map_location: str = "cpu"
    ) -> None:
        self.checkpoint = checkpoint
        self.prefix = prefix
        self.map_location = map_location
        self.wholemodule = False

    def _state_dict(self) -> dict[str, torch.Tensor]:
        path = os.fspath(self.checkpoint)
        if "://" in path:
            raise ValueError(
                f"Pretrained init loads local files only; download '{path}' first and pass its path"
            )
        if not os.path.isfile(path):
            raise FileNotFoundError(f"Pretrained init: checkpoint '{path}' does not exist")
        loaded = torch.load(path, map_location=self.map_location, weights_only=True)
        for key in ("state_dict", "model"):
            if isinstance(loaded, dict) and isinstance(loaded.get(key), dict):
                loaded = loaded[key]
                break
        if not isinstance(loaded, dict):
            raise TypeError(
                f"checkpoint '{path}' holds no state dict (got {type(loaded).__name__})"
            )
        state = {k[7:] if k.startswith("module.") else k: v for k, v in loaded.items()}
        if self.prefix is not None:
            state = {
                k[len(self.prefix) :]: v for k, v in state.items() if k.startswith(self.prefix)
            }
            if not state:
                raise KeyError(f"checkpoint '{path}' has no keys starting with '{self.prefix}'")
        return state

    def __call__(self, module: nn.Module) -> None:
        print_log(f"load {self.prefix or 'model'} from {self.checkpoint}", logger="current")
        result = module.load_state_dict(self._state_dict(), strict=False)
        if result.missing_keys or result.unexpected_keys:
            print_log(
                f"Pretrained init from {self.checkpoint}: missing keys {result.missing_keys}, "
                f"unexpected keys {result.unexpected_keys}",
                logger="current",
                level=30,
            )


def _apply_one(module: nn.Module, cfg: dict[str, Any], wholemodule: bool = False) -> None:
    initializer = WEIGHT_INITIALIZERS.build(cfg)
    initializer.wholemodule = wholemodule
    initializer(module)


def _apply_override(module: nn.Module, override: Any, parent_cfg: dict[str, Any]) -> None:
    if not isinstance(override, (dict, list)):
        raise TypeError(
            f"override must be a dict or a list of dicts, got {type(override).__name__}"
        )
    for item in [override] if isinstance(override, dict) else override:
        item = dict(item)
        name = item.pop("name", None)
        if name is None:
            raise KeyError(f"an init_cfg override needs 'name' (the child to initialise): {item}")
        if not item:
            item = dict(parent_cfg)
        elif "type" not in item:
            raise KeyError(f"an init_cfg override with arguments needs 'type': {item}")
        child = getattr(module, name, None)
        if not isinstance(child, nn.Module):
            children = [n for n, _ in module.named_children()]
            raise AttributeError(
                f"init_cfg override names '{name}', but {type(module).__name__} has no such "
                f"child module (children: {children})"
            )
        _apply_one(child, item, wholemodule=True)


def initialize(module: nn.Module, init_cfg: dict[str, Any] | list[dict[str, Any]]) -> None:
    """Initialise ``module`` with one init config or a list of them, in order."""
    if not isinstance(init_cfg, (dict, list)):
        raise TypeError(
            f"init_cfg must be a dict or a list of dicts, got {type(init_cfg).__name__}"
        )
    for cfg in [init_cfg] if isinstance(init_cfg, dict) else init_cfg:
        cfg = copy.deepcopy(dict(cfg))
        override = cfg.pop("override", None)
        _apply_one(module, cfg)
        if override is not None:
            cfg.pop("layer", None)
            _apply_override(module, override, cfg)
