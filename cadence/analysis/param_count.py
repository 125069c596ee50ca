"""Parameter counts of a model: per parameter, per module and in all."""

from __future__ import annotations

from collections import defaultdict

from torch import nn

from .table import format_count, pipe_table


def parameter_count(model: nn.Module) -> defaultdict[str, int]:
    """Elements per parameter name and per module name (each module counts its own and
    its children's parameters; ``''`` is the whole model). A parameter shared by several
    modules is counted once, under the first name it is reached by."""
    counts: defaultdict[str, int] = defaultdict(int)
    for name, param in model.named_parameters():
        parts = name.split(".")
        for depth in range(len(parts) + 1):
            counts[".".join(parts[:depth])] += param.numel()
    return counts


def _children(names: list[str], parent: str) -> list[str]:
    """The names in ``names`` one level below ``parent`` (``''``: the top level)."""
    prefix = parent + "." if parent else ""
    depth = parent.count(".") + 1 if parent else 0
    return [n for n in names if n and n.startswith(prefix) and n.count(".") == depth]


def parameter_count_table(model: nn.Module, max_depth: int = 3) -> str:
    """A table of :func:`parameter_count` down to ``max_depth`` levels: a module's row
    gives its count, a parameter's row its shape."""
    counts = parameter_count(model)
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    names = list(counts)
    rows = [["model", format_count(counts[""])]]

    def add(parent: str, level: int) -> None:
        if level >= max_depth:
            return
        for name in _children(names, parent):
            indent = " " * (level + 1)
            value = str(shapes[name]) if name in shapes else format_count(counts[name])
            rows.append([indent + name, indent + value])
            if name not in shapes:
                add(name, level + 1)

    add("", 0)
    return f"parameter count of {type(model).__name__}\n" + pipe_table(
        ["name", "#elements or shape"], rows
    )
