"""FLOP and activation counts of a model (and, as mmengine's module has them, parameters).

mmengine's ``mmengine.analysis.complexity_analysis`` is this module.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from torch import nn

from .handles import (
    Handle,
    addmm_flop_jit,
    batchnorm_flop_jit,
    bmm_flop_jit,
    conv_flop_jit,
    einsum_flop_jit,
    elementwise_flop_counter,
    generic_activation_jit,
    linear_flop_jit,
    matmul_flop_jit,
    norm_flop_counter,
)
from .jit_analysis import JitModelAnalysis
from .param_count import parameter_count, parameter_count_table

__all__ = [
    "ActivationAnalyzer", "FlopAnalyzer", "activation_count", "flop_count", "parameter_count",
    "parameter_count_table",
]  # fmt: skip

#: The op handles :class:`FlopAnalyzer` starts with.
_DEFAULT_SUPPORTED_FLOP_OPS: dict[str, Handle] = {
    "aten::addmm": addmm_flop_jit,
    "aten::bmm": bmm_flop_jit,
    "aten::_convolution": conv_flop_jit,
    "aten::einsum": einsum_flop_jit,
    "aten::matmul": matmul_flop_jit,
    "aten::mm": matmul_flop_jit,
    "aten::linear": linear_flop_jit,
    "aten::batch_norm": batchnorm_flop_jit,
    "aten::group_norm": norm_flop_counter(2),
    "aten::layer_norm": norm_flop_counter(2),
    "aten::instance_norm": norm_flop_counter(1),
    "aten::upsample_nearest2d": elementwise_flop_counter(0, 1),
    "aten::upsample_bilinear2d": elementwise_flop_counter(0, 4),
    "aten::adaptive_avg_pool2d": elementwise_flop_counter(1, 0),
    "aten::grid_sampler": elementwise_flop_counter(0, 4),  # as if bilinear
}

#: The op handles :class:`ActivationAnalyzer` starts with: the output size of the ops
#: that produce new features.
_DEFAULT_SUPPORTED_ACT_OPS: dict[str, Handle] = {
    "aten::_convolution": generic_activation_jit("conv"),
    "aten::addmm": generic_activation_jit(),
    "aten::bmm": generic_activation_jit(),
    "aten::einsum": generic_activation_jit(),
    "aten::matmul": generic_activation_jit(),
    "aten::linear": generic_activation_jit(),
}


class FlopAnalyzer(JitModelAnalysis):
    """FLOPs of ``model(*inputs)`` by module and operator (one multiply-add is one FLOP;
    matrix products, convolutions, norms, pooling and upsampling are counted)."""

    def __init__(self, model: nn.Module, inputs: Any) -> None:
        super().__init__(model, inputs)
        self.set_op_handle(**_DEFAULT_SUPPORTED_FLOP_OPS)


class ActivationAnalyzer(JitModelAnalysis):
    """Activations of ``model(*inputs)``: the output elements of convolutions and matrix
    products, by module and operator."""

    def __init__(self, model: nn.Module, inputs: Any) -> None:
        super().__init__(model, inputs)
        self.set_op_handle(**_DEFAULT_SUPPORTED_ACT_OPS)


def _scaled(
    analysis: JitModelAnalysis, supported_ops: dict[str, Handle] | None, scale: float
) -> tuple[defaultdict[str, float], Counter[str]]:
    analysis.set_op_handle(**(supported_ops or {}))
    counts: defaultdict[str, float] = defaultdict(float)
    for op, count in analysis.by_operator().items():
        counts[op] = count / scale
    return counts, analysis.unsupported_ops()


def flop_count(
    model: nn.Module, inputs: Any, supported_ops: dict[str, Handle] | None = None
) -> tuple[defaultdict[str, float], Counter[str]]:
    """GFLOPs of ``model(*inputs)`` by operator, and how often each op without a handle
    ran. ``supported_ops`` adds handles to (or replaces) the default ones."""
    return _scaled(FlopAnalyzer(model, inputs), supported_ops, 1e9)


def activation_count(
    model: nn.Module, inputs: Any, supported_ops: dict[str, Handle] | None = None
) -> tuple[defaultdict[str, float], Counter[str]]:
    """Activations of ``model(*inputs)`` by operator, in millions, and how often each op
    without a handle ran. ``supported_ops`` adds handles to (or replaces) the default ones."""
    return _scaled(ActivationAnalyzer(model, inputs), supported_ops, 1e6)
