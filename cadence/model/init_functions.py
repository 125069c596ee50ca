"""mmengine's function initialisers: fill a module's ``weight`` one way and its ``bias``
with a constant.

Each draws from torch's global generator with the same calls, in the same order, as
mmengine 0.10.7, so that a seeded model starts from the same numbers; a module without
``weight`` or ``bias`` (or with ``None`` there) keeps it as it is.
"""

from __future__ import annotations

import math
import warnings

import torch
from torch import nn

_DISTRIBUTIONS = ("uniform", "normal")


def _weight(module: nn.Module) -> torch.Tensor | None:
    return getattr(module, "weight", None)


def _fill_bias(module: nn.Module, bias: float) -> None:
    if getattr(module, "bias", None) is not None:
        nn.init.constant_(module.bias, bias)  # type: ignore[arg-type]


def _check_distribution(distribution: str) -> None:
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"distribution must be 'uniform' or 'normal', got {distribution!r}")


def constant_init(module: nn.Module, val: float, bias: float = 0) -> None:
    """``weight`` = ``val``, ``bias`` = ``bias``."""
    if (weight := _weight(module)) is not None:
        nn.init.constant_(weight, val)
    _fill_bias(module, bias)


def xavier_init(
    module: nn.Module, gain: float = 1, bias: float = 0, distribution: str = "normal"
) -> None:
    """Xavier (Glorot) ``weight``, uniform or normal."""
    _check_distribution(distribution)
    if (weight := _weight(module)) is not None:
        if distribution == "uniform":
            nn.init.xavier_uniform_(weight, gain=gain)
        else:
            nn.init.xavier_normal_(weight, gain=gain)
    _fill_bias(module, bias)


def normal_init(module: nn.Module, mean: float = 0, std: float = 1, bias: float = 0) -> None:
    """``weight`` ~ N(mean, std²)."""
    if (weight := _weight(module)) is not None:
        nn.init.normal_(weight, mean, std)
    _fill_bias(module, bias)


def trunc_normal_(
    tensor: torch.Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0
) -> torch.Tensor:
    """Fill ``tensor`` in place from N(mean, std²) truncated to [a, b]; return it.

    The inverse-CDF method: a uniform draw between the CDF values of ``a`` and ``b``,
    mapped through ``erfinv``, then clamped (mmengine's steps, in its order).
    """

    def norm_cdf(x: float) -> float:
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn(
            "mean is more than 2 std from [a, b] in trunc_normal_; the distribution of "
            "values may be incorrect",
            stacklevel=2,
        )
    with torch.no_grad():
        lower, upper = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
        tensor.uniform_(2 * lower - 1, 2 * upper - 1)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
    return tensor


def trunc_normal_init(
    module: nn.Module,
    mean: float = 0,
    std: float = 1,
    a: float = -2,
    b: float = 2,
    bias: float = 0,
) -> None:
    """``weight`` ~ N(mean, std²) truncated to [a, b] (:func:`trunc_normal_`)."""
    if (weight := _weight(module)) is not None:
        trunc_normal_(weight, mean, std, a, b)
    _fill_bias(module, bias)


def uniform_init(module: nn.Module, a: float = 0, b: float = 1, bias: float = 0) -> None:
    """``weight`` ~ U(a, b)."""
    if (weight := _weight(module)) is not None:
        nn.init.uniform_(weight, a, b)
    _fill_bias(module, bias)


def kaiming_init(
    module: nn.Module,
    a: float = 0,
    mode: str = "fan_out",
    nonlinearity: str = "relu",
    bias: float = 0,
    distribution: str = "normal",
) -> None:
    """Kaiming (He) ``weight``, uniform or normal (default: fan_out, relu, normal)."""
    _check_distribution(distribution)
    if (weight := _weight(module)) is not None:
        init = nn.init.kaiming_uniform_ if distribution == "uniform" else nn.init.kaiming_normal_
        init(weight, a=a, mode=mode, nonlinearity=nonlinearity)  # type: ignore[arg-type]
    _fill_bias(module, bias)


def caffe2_xavier_init(module: nn.Module, bias: float = 0) -> None:
    """Caffe2's ``XavierFill``: Kaiming uniform, fan_in, leaky_relu with a=1."""
    kaiming_init(
        module, a=1, mode="fan_in", nonlinearity="leaky_relu", bias=bias, distribution="uniform"
    )


__all__ = [
    "caffe2_xavier_init", "constant_init", "kaiming_init", "normal_init", "trunc_normal_",
    "trunc_normal_init", "uniform_init", "xavier_init",
]  # fmt: skip
