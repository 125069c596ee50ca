"""Tracing a model into a graph whose ops know the modules that were running them.

Each module's forward pushes its (canonical) name onto the tracer's scope stack and pops
it when done, so a traced op's ``scopeName()`` reads ``'/conv'`` or
``'/submod/submod.fc'``: the model (``''``) and the modules executing ``forward`` when
the op ran, outermost first. torch's jit tracer is imported only here, on first use.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn


@dataclass(frozen=True)
class ModuleNames:
    """A model's module names: every name of every module, mapped to its canonical one
    (the first name the module is reached under; a shared module has several)."""

    aliases: dict[str, str]
    modules: dict[str, nn.Module]  # canonical name -> module

    @classmethod
    def of(cls, model: nn.Module) -> ModuleNames:
        first: dict[int, str] = {}
        aliases: dict[str, str] = {}
        modules: dict[str, nn.Module] = {}
        for name, module in model.named_modules(remove_duplicate=False):
            canonical = first.setdefault(id(module), name)
            aliases[name] = canonical
            modules.setdefault(canonical, module)
        return cls(aliases, modules)


def _wrappers() -> tuple[type, ...]:
    return (nn.DataParallel, nn.parallel.DistributedDataParallel)


def _push(name: str) -> Any:
    def hook(module: nn.Module, args: Any) -> None:
        state = torch._C._get_tracing_state()
        if state:
            state.push_scope(name)

    return hook


def _pop(module: nn.Module, args: Any, output: Any) -> None:
    state = torch._C._get_tracing_state()
    if state:
        state.pop_scope()


def as_inputs(inputs: Any) -> tuple[Any, ...]:
    """The positional inputs of a forward call: a tuple as given, anything else alone."""
    return inputs if isinstance(inputs, tuple) else (inputs,)


def scoped_graph(model: nn.Module, inputs: Any, names: ModuleNames) -> torch._C.Graph:
    """The inlined trace graph of ``model(*inputs)`` (parameters are graph inputs), each
    op scoped by the modules running it. A DataParallel/DDP wrapper is traced through its
    ``module``, under the wrapper's own name."""
    from torch.jit import _get_trace_graph

    handles: list[Any] = []

    def scope(module: nn.Module, name: str) -> None:
        handles.append(module.register_forward_pre_hook(_push(name)))
        handles.append(module.register_forward_hook(_pop))

    target = model
    if isinstance(model, _wrappers()):
        target = model.module  # type: ignore[assignment]
        scope(target, "")  # first: the wrapper's scope encloses its module's
    for name, module in names.modules.items():
        scope(module, name)
    try:
        graph, _ = _get_trace_graph(target, as_inputs(inputs))
    finally:
        for handle in handles:
            handle.remove()
    return graph


def op_kind(node: Any) -> str:
    """The op's name: ``aten::linear``; a custom autograd function is
    ``prim::PythonOp.<its class name>``."""
    kind = str(node.kind())
    return f"{kind}.{node.pyname()}" if kind == "prim::PythonOp" else kind


def scopes(node: Any) -> list[str]:
    """The canonical names of the modules running when ``node``'s op ran, outermost first
    (the model is ``''``)."""
    return str(node.scopeName()).split("/")


def nodes(graph: Any) -> Iterator[Any]:
    """The ops of a traced graph, in order."""
    return iter(graph.nodes())
