"""Per-operator handles: what one traced op costs (FLOPs, activations), from its shapes.

A handle is called with the op's inputs and outputs (``torch._C.Value`` of a traced
graph) and returns a number (filed under the op's short name, ``aten::linear`` ->
``linear``) or a :class:`~collections.Counter` of named counts. FLOPs count one
multiply-add as one FLOP, as mmengine and fvcore do. The names are mmengine's
(``mmengine.analysis.jit_handles``).
"""

from __future__ import annotations

import math
import string
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Union

#: A handle: ``(inputs, outputs) -> number or Counter`` for one op of a traced graph.
Handle = Callable[[list[Any], list[Any]], Union[int, float, "Counter[str]"]]


def get_shape(val: Any) -> list[int] | None:
    """The static shape of a traced value: a tensor's sizes, ``[]`` for a scalar number,
    None where the trace does not know it (or the value is None)."""
    if val.isCompleteTensor():
        return list(val.type().sizes())
    kind = val.type().kind()
    if kind in ("IntType", "FloatType"):
        return []
    if kind == "ListType":  # a list built in the graph: the shapes of its items
        producer = val.node()
        if producer.kind() == "prim::ListConstruct":
            return [get_shape(item) for item in producer.inputs()]  # type: ignore[misc]
    return None


def _shape(val: Any) -> list[int]:
    shape = get_shape(val)
    if shape is None:
        raise ValueError(f"the trace does not know the shape of {val.debugName()!r}")
    return shape


def _numel(val: Any) -> int:
    return math.prod(_shape(val))


def _constant(val: Any) -> Any:
    """A constant input's Python value (``training``, ``transposed``, an equation)."""
    return val.toIValue()


def _is_none(val: Any) -> bool:
    return val.type().kind() == "NoneType"


def addmm_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``addmm(bias, x[N, C], w[C, K])``: N * C * K."""
    rows, inner = _shape(inputs[1])
    inner2, cols = _shape(inputs[2])
    if inner != inner2:
        raise ValueError(f"addmm of {rows}x{inner} and {inner2}x{cols}")
    return rows * inner * cols


def linear_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``linear(x[..., C], w[K, C])``: every element of ``x`` meets K weights."""
    return _numel(inputs[0]) * _shape(inputs[1])[0]


def bmm_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``bmm(x[B, N, C], y[B, C, K])``: B * N * C * K."""
    batch, rows, inner = _shape(inputs[0])
    return batch * rows * inner * _shape(inputs[1])[-1]


def matmul_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``matmul``/``mm`` with broadcasting: each output element is one dot product over
    the last dimension of the first operand."""
    first = _shape(inputs[0])
    return math.prod(_shape(outputs[0])) * (first[-1] if first else 1)


def conv_flop_count(
    x_shape: Sequence[int], w_shape: Sequence[int], out_shape: Sequence[int],
    transposed: bool = False,
) -> int:  # fmt: skip
    """FLOPs of one convolution: every weight is applied once per output position (per
    input position for a transposed convolution), per sample."""
    batch = x_shape[0]
    positions = x_shape[2:] if transposed else out_shape[2:]
    return batch * math.prod(w_shape) * math.prod(positions)


def conv_flop_jit(inputs: list[Any], outputs: list[Any]) -> Counter[str]:
    """``aten::_convolution``: see :func:`conv_flop_count`; filed under ``conv``."""
    transposed = bool(_constant(inputs[6])) if len(inputs) > 6 else False
    flops = conv_flop_count(_shape(inputs[0]), _shape(inputs[1]), _shape(outputs[0]), transposed)
    return Counter({"conv": flops})


def _einsum_terms(equation: str, shapes: list[list[int]]) -> tuple[list[str], str]:
    """The operand subscripts and the output of ``equation``, with ``...`` spelled out in
    letters the equation does not use (right-aligned, as broadcasting aligns)."""
    lhs, arrow, rhs = equation.replace(" ", "").partition("->")
    terms = lhs.split(",")
    covered = [len(s) - (len(t) - 3) if "..." in t else 0 for t, s in zip(terms, shapes)]
    width = max(covered, default=0)
    fill = "".join([c for c in string.ascii_letters if c not in equation][:width])
    terms = [t.replace("...", fill[width - k :]) for t, k in zip(terms, covered)]
    if arrow:
        return terms, rhs.replace("...", fill)
    once = Counter("".join(terms))  # implicit output: the letters used once, in order
    return terms, fill + "".join(sorted(c for c, n in once.items() if n == 1 and c not in fill))


def einsum_flop_count(equation: str, shapes: list[list[int]]) -> int:
    """FLOPs of ``einsum(equation, *operands)``, contracting the operands left to right:
    each pairwise step costs the product of the sizes of the letters it involves."""
    terms, out = _einsum_terms(equation, shapes)
    sizes: dict[str, int] = {}
    for term, shape in zip(terms, shapes):
        for letter, size in zip(term, shape):
            sizes[letter] = max(size, sizes.get(letter, 1))  # broadcast size-1 dims
    if len(terms) == 1:
        return math.prod(sizes[c] for c in set(terms[0]))
    flops, current = 0, terms[0]
    for index, term in enumerate(terms[1:], start=1):
        involved = set(current) | set(term)
        flops += math.prod(sizes[c] for c in involved)
        later = set(out).union(*terms[index + 1 :])
        current = "".join(c for c in involved if c in later)
    return flops


def einsum_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``aten::einsum(equation, operands)``: see :func:`einsum_flop_count`."""
    equation = _constant(inputs[0])
    shapes = get_shape(inputs[1])
    if not isinstance(equation, str) or not shapes or any(s is None for s in shapes):
        raise ValueError("einsum with an equation or operand shapes the trace does not know")
    return einsum_flop_count(equation, shapes)  # type: ignore[arg-type]


def batchnorm_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
    """``batch_norm(x, weight, bias, mean, var, training, ...)``: one FLOP per element to
    normalise with running statistics, four when the batch statistics are computed
    (training), plus one for the affine transform."""
    training = bool(_constant(inputs[5])) if len(inputs) > 5 else False
    per_element = (4 if training else 1) + (0 if _is_none(inputs[1]) else 1)
    return _numel(inputs[0]) * per_element


def norm_flop_counter(affine_arg_index: int) -> Handle:
    """A handle for a norm that always computes its statistics (group, layer, instance
    norm): four FLOPs per element, plus one when the input at ``affine_arg_index`` (the
    weight) is given."""

    def norm_flop_jit(inputs: list[Any], outputs: list[Any]) -> int:
        affine = not _is_none(inputs[affine_arg_index])
        return _numel(inputs[0]) * (5 if affine else 4)

    return norm_flop_jit


def elementwise_flop_counter(input_scale: float = 1, output_scale: float = 0) -> Handle:
    """A handle costing ``input_scale`` FLOPs per input element plus ``output_scale`` per
    output element (pooling, upsampling, grid sampling)."""

    def elementwise_flop(inputs: list[Any], outputs: list[Any]) -> int | float:
        flops: int | float = 0
        if input_scale:
            flops += input_scale * _numel(inputs[0])
        if output_scale:
            flops += output_scale * _numel(outputs[0])
        return flops

    return elementwise_flop


def generic_activation_jit(op_name: str | None = None) -> Handle:
    """A handle counting the elements of the op's first output (its activations); filed
    under ``op_name`` when given, else under the op's short name."""

    def activation_jit(inputs: list[Any], outputs: list[Any]) -> int | Counter[str]:
        count = _numel(outputs[0])
        return Counter({op_name: count}) if op_name else count

    return activation_jit
