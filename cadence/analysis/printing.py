"""Per-module statistics as text: a table, and the model's repr annotated with them."""

from __future__ import annotations

from collections.abc import Callable

from torch import nn

from .complexity import ActivationAnalyzer, FlopAnalyzer
from .param_count import parameter_count
from .table import format_count, pipe_table


def _columns(
    flops: FlopAnalyzer, activations: ActivationAnalyzer | None, params_header: str
) -> dict[str, dict[str, int]]:
    """Column header -> module name -> count, for the parameters, FLOPs (and activations)."""
    columns = {params_header: dict(parameter_count(flops._model)), "#flops": flops.by_module()}
    if activations is not None:
        columns["#activations"] = activations.by_module()
    return columns


def complexity_stats_table(
    flops: FlopAnalyzer, max_depth: int = 3, activations: ActivationAnalyzer | None = None,
    show_param_shapes: bool = True,
) -> str:  # fmt: skip
    """A table of parameters, FLOPs (and activations) of the model and of its modules down
    to ``max_depth`` levels; modules with nothing to count are left out, and with
    ``show_param_shapes`` each parameter's shape gets a row under its module."""
    params_header = "#parameters" + (" or shape" if show_param_shapes else "")
    columns = _columns(flops, activations, params_header)
    model = flops._model
    shapes = dict(model.named_parameters()) if show_param_shapes else {}
    modules = [name for name in flops.by_module_and_operator() if name]
    rows = [["model", *(format_count(col.get("", 0)) for col in columns.values())]]

    def add(parent: str, level: int) -> None:
        if level > max_depth:
            return
        prefix = parent + "." if parent else ""
        indent = " " * level
        for name, param in shapes.items():
            if name.startswith(prefix) and "." not in name[len(prefix) :]:
                rows.append([indent + name, indent + str(tuple(param.shape))]
                            + [""] * (len(columns) - 1))  # fmt: skip
        for name in modules:
            if not name.startswith(prefix) or "." in name[len(prefix) :]:
                continue
            counts = [col.get(name, 0) for col in columns.values()]
            if any(counts):
                rows.append(
                    [indent + name, *(indent + format_count(c, hide_zero=True) for c in counts)]
                )
                add(name, level + 1)

    add("", 1)
    return pipe_table(["module", *columns], rows)


def _annotated_repr(module: nn.Module, name: str, describe: Callable[[str], str]) -> str:
    lines = [line for line in (describe(name), module.extra_repr()) if line]
    for key, child in module.named_children():
        child_name = f"{name}.{key}" if name else key
        lines.append(f"({key}): " + _annotated_repr(child, child_name, describe))
    if not lines:
        return type(module).__name__ + "()"
    body = "\n".join("  " + line for text in lines for line in text.split("\n"))
    return f"{type(module).__name__}(\n{body}\n)"


def complexity_stats_str(flops: FlopAnalyzer, activations: ActivationAnalyzer | None = None) -> str:
    """The model's repr with each module's parameters, FLOPs (and activations) on the
    line after its name."""
    columns = _columns(flops, activations, "#params")

    def describe(name: str) -> str:
        canonical = flops.canonical_module_name(name)
        return ", ".join(f"{header}: {format_count(col.get(canonical, 0))}"
                         for header, col in columns.items())  # fmt: skip

    return _annotated_repr(flops._model, "", describe)
