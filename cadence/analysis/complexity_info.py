"""One call for a model's complexity: FLOPs, activations and parameters, with the texts.

mmengine's ``mmengine.analysis.print_helper`` is this module.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from .complexity import ActivationAnalyzer, FlopAnalyzer
from .param_count import parameter_count
from .printing import complexity_stats_str, complexity_stats_table
from .table import format_count

__all__ = ["complexity_stats_str", "complexity_stats_table", "get_model_complexity_info"]


def _is_shape(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(v, int) for v in value)


def _dummy_inputs(model: nn.Module, input_shape: Any) -> tuple[torch.Tensor, ...]:
    """Random inputs of batch size 1: one per shape of ``input_shape`` (a shape, or a
    tuple of shapes), on the device of the model's parameters."""
    param = next(model.parameters(), None)
    device = param.device if param is not None else torch.device("cpu")
    if _is_shape(input_shape):
        shapes = (input_shape,)
    elif isinstance(input_shape, tuple) and input_shape and all(map(_is_shape, input_shape)):
        shapes = input_shape
    else:
        raise ValueError(
            f"get_model_complexity_info: input_shape={input_shape!r} is neither a tuple of "
            "int (the shape of one input, without the batch dimension) nor a tuple of such "
            "tuples (one per input)"
        )
    return tuple(torch.randn(1, *shape, device=device) for shape in shapes)


def get_model_complexity_info(
    model: nn.Module, input_shape: Any = None, inputs: Any = None, show_table: bool = True,
    show_arch: bool = True,
) -> dict[str, Any]:  # fmt: skip
    """FLOPs, activations and parameters of ``model`` on ``inputs`` (given, or random
    ones of ``input_shape`` with batch size 1), as numbers (``flops``, ``activations``,
    ``params``), as short strings (``*_str``), and as a table (``out_table``) and an
    annotated model repr (``out_arch``) where asked for."""
    if input_shape is None and inputs is None:
        raise ValueError(
            'get_model_complexity_info: one of "input_shape" and "inputs" should be set '
            "(the shape of random inputs, or the inputs themselves)"
        )
    if input_shape is not None and inputs is not None:
        raise ValueError(
            'get_model_complexity_info: "input_shape" and "inputs" cannot be both set '
            "(pass inputs, or the shape to make random ones of)"
        )
    if inputs is None:
        inputs = _dummy_inputs(model, input_shape)
    flops = FlopAnalyzer(model, inputs)
    # the FLOP trace reports unsupported ops and uncalled modules; the activation trace
    # would repeat the latter and list every op that makes no new features as the former
    activations = (
        ActivationAnalyzer(model, inputs)
        .unsupported_ops_warnings(False)
        .uncalled_modules_warnings(False)
    )
    info: dict[str, Any] = {
        "flops": flops.total(),
        "activations": activations.total(),
        "params": parameter_count(model)[""],
    }
    for key in ("flops", "activations", "params"):
        info[key + "_str"] = format_count(info[key])
    table = complexity_stats_table(flops, activations=activations) if show_table else None
    arch = complexity_stats_str(flops, activations=activations) if show_arch else None
    info["out_table"] = "\n" + table if table is not None else ""
    info["out_arch"] = "\n" + arch if arch is not None else ""
    return info
