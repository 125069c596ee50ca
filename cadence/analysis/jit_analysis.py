"""Per-module, per-operator statistics of one traced forward call.

:class:`JitModelAnalysis` traces ``model(*inputs)`` once (on first request), gives each
op of the graph to the handle registered for its kind and adds the result to every
module the op is attributed to. Which modules those are is the *ancestor mode*:

* ``'owner'`` (default): the innermost running module and its parents by name;
* ``'caller'``: every module whose ``forward`` was running when the op ran.

Ops without a handle are counted as unsupported (unless they are known to cost nothing,
see :data:`IGNORED_OPS`); modules no op was attributed to are reported as uncalled. Both
are logged once per trace, as warnings, to the current logger.
"""

from __future__ import annotations

import logging
import warnings
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from numbers import Number
from typing import Any, TypeVar

from torch import nn

from ..logging import print_log
from .handles import Handle
from .trace import ModuleNames, nodes, op_kind, scoped_graph, scopes

#: Ops that move, reshape, create, compare or select data: they are not counted and not
#: reported as unsupported. Any other ``prim::`` op is graph bookkeeping and skipped as
#: well, except ``prim::PythonOp`` (a custom autograd function) and
#: ``prim::CallFunction`` (a scripted function), which can hide real work.
IGNORED_OPS: frozenset[str] = frozenset(
    "aten::" + op
    for op in (
        # shape and layout
        "view reshape flatten squeeze unsqueeze unsqueeze_ permute transpose t expand "
        "contiguous narrow select slice split split_with_sizes chunk unbind stack cat "
        "roll constant_pad_nd "
        # indexing
        "index index_put_ gather masked_fill nonzero "
        # creation, conversion, copies
        "empty zeros zeros_like ones full full_like new_empty new_full new_zeros arange "
        "to type_as detach copy_ Int ScalarImplicit size "
        # comparison, logic, rounding
        "eq ge gt __and__ bitwise_not max clamp clamp_ floor floor_divide remainder "
        # no arithmetic worth counting
        "dropout relu relu_"
    ).split()
)

ANCESTOR_MODES = ("owner", "caller")
TRACER_WARNING_MODES = ("all", "no_tracer_warning", "none")

T = TypeVar("T", bound="JitModelAnalysis")


@dataclass(frozen=True)
class Statistics:
    """What one trace found: counts and unsupported ops per module (canonical names),
    and the modules no op was attributed to."""

    counts: dict[str, Counter[str]]
    unsupported_ops: dict[str, Counter[str]]
    uncalled_mods: set[str]


def _short_name(kind: str) -> str:
    """``aten::batch_norm`` -> ``batch_norm``."""
    return kind.split("::", 1)[-1]


def _as_counter(kind: str, result: Any) -> Counter[str]:
    if isinstance(result, Number):
        result = Counter({_short_name(kind): result})
    elif isinstance(result, Mapping):
        result = Counter(result)
    else:
        raise TypeError(f"the handle of {kind} returned {type(result).__name__}, "
                        "not a number or a Counter")  # fmt: skip
    for value in result.values():
        if not isinstance(value, Number) or isinstance(value, (bool, complex)):
            raise ValueError(
                f"the handle of {kind} counted a {type(value).__name__} ({value!r}); "
                "counts are int or float"
            )
    return result


def _callable_modules(names: ModuleNames) -> set[str]:
    """The modules a forward call can be expected to reach: not containers
    (ModuleList/ModuleDict and plain Modules have no forward), not Identity (it has no ops)."""
    silent = (nn.Module.forward, nn.ModuleList.forward, nn.ModuleDict.forward,
              nn.Identity.forward)  # fmt: skip
    return {name for name, mod in names.modules.items() if type(mod).forward not in silent}


class JitModelAnalysis:
    """Statistics of ``model(*inputs)`` by module and by operator, from the handles set
    with :meth:`set_op_handle` (none by default; see
    :class:`~cadence.analysis.FlopAnalyzer` for FLOPs)."""

    def __init__(self, model: nn.Module, inputs: Any) -> None:
        self._model = model
        self._inputs = inputs
        self._names = ModuleNames.of(model)
        self._op_handles: dict[str, Handle] = {}
        self._ignored_ops: set[str] = set(IGNORED_OPS)
        self._stats: Statistics | None = None
        self._enable_warn_unsupported_ops = True
        self._enable_warn_uncalled_mods = True
        self._warn_trace = "no_tracer_warning"
        self._ancestor_mode = "owner"

    # results -------------------------------------------------------------------------

    def total(self, module_name: str = "") -> int:
        """The sum of all counts of the module ``module_name`` (the model: ``''``)."""
        return sum(self.by_operator(module_name).values())

    def by_operator(self, module_name: str = "") -> Counter[str]:
        """The counts of the module ``module_name``, by operator."""
        return self._analyze().counts[self.canonical_module_name(module_name)]

    def by_module_and_operator(self) -> dict[str, Counter[str]]:
        """The counts by operator of every module (canonical names)."""
        return self._analyze().counts

    def by_module(self) -> Counter[str]:
        """The total count of every module (canonical names)."""
        stats = self._analyze()
        return Counter({name: sum(counts.values()) for name, counts in stats.counts.items()})

    def unsupported_ops(self, module_name: str = "") -> Counter[str]:
        """How often each op without a handle ran in the module ``module_name``."""
        return self._analyze().unsupported_ops[self.canonical_module_name(module_name)]

    def uncalled_modules(self) -> set[str]:
        """The modules no op of the trace was attributed to: unused, called only through
        another method than ``forward`` (in ``'caller'`` mode), or whose ops the trace
        dropped because their result was not used."""
        return self._analyze().uncalled_mods

    def canonical_module_name(self, name: str) -> str:
        """The name the statistics of the module ``name`` are filed under (a shared
        module is filed under the first name it is reached by)."""
        if not isinstance(name, str):
            raise TypeError(f"a module is named by a string, got {type(name).__name__}")
        try:
            return self._names.aliases[name]
        except KeyError:
            raise KeyError(
                f"{name!r} is not a module of the analyzed {type(self._model).__name__} "
                "(module names are those of model.named_modules())"
            ) from None

    # settings --------------------------------------------------------------------------

    def set_op_handle(self: T, *args: Any, **kwargs: Handle | None) -> T:
        """Set (or replace) op handles, as ``(name, handle)`` pairs and/or keywords; a
        handle of ``None`` ignores the op."""
        if len(args) % 2:
            raise TypeError("set_op_handle takes pairs of names and handles")
        pairs = list(zip(args[::2], args[1::2])) + list(kwargs.items())
        for name, handle in pairs:
            if handle is None:
                self._ignored_ops.add(name)
                self._op_handles.pop(name, None)
            else:
                self._op_handles[name] = handle
                self._ignored_ops.discard(name)
        self._stats = None
        return self

    def clear_op_handles(self: T) -> T:
        """Remove every handle (and restore the default ignored ops)."""
        self._op_handles = {}
        self._ignored_ops = set(IGNORED_OPS)
        self._stats = None
        return self

    def ancestor_mode(self: T, mode: str) -> T:
        """``'owner'`` or ``'caller'``: which modules an op is attributed to (see the
        module's docstring). Totals are the same in both."""
        if mode not in ANCESTOR_MODES:
            raise ValueError(f"Unrecognized ancestor mode: {mode!r} (one of {ANCESTOR_MODES})")
        self._ancestor_mode = mode
        self._stats = None
        return self

    def tracer_warnings(self: T, mode: str) -> T:
        """Python warnings raised while tracing: ``'all'`` kept, ``'no_tracer_warning'``
        (default) without torch's TracerWarning, ``'none'`` dropped."""
        if mode not in TRACER_WARNING_MODES:
            raise ValueError(
                f"Unrecognized tracer warning mode: {mode!r} (one of {TRACER_WARNING_MODES})"
            )
        self._warn_trace = mode
        return self

    def unsupported_ops_warnings(self: T, enabled: bool) -> T:
        """Whether a trace logs the ops it found no handle for (default True)."""
        self._enable_warn_unsupported_ops = enabled
        return self

    def uncalled_modules_warnings(self: T, enabled: bool) -> T:
        """Whether a trace logs the modules it attributed no op to (default True)."""
        self._enable_warn_uncalled_mods = enabled
        return self

    def copy(self, new_model: nn.Module | None = None, new_inputs: Any = None) -> JitModelAnalysis:
        """A new analysis with these handles and settings, of ``new_model`` and/or
        ``new_inputs`` where given."""
        other = JitModelAnalysis(
            self._model if new_model is None else new_model,
            self._inputs if new_inputs is None else new_inputs,
        )
        other._op_handles = dict(self._op_handles)
        other._ignored_ops = set(self._ignored_ops)
        other._ancestor_mode = self._ancestor_mode
        other._warn_trace = self._warn_trace
        other._enable_warn_unsupported_ops = self._enable_warn_unsupported_ops
        other._enable_warn_uncalled_mods = self._enable_warn_uncalled_mods
        return other

    # the analysis ----------------------------------------------------------------------

    def _trace(self) -> Any:
        with warnings.catch_warnings():
            if self._warn_trace == "none":
                warnings.simplefilter("ignore")
            elif self._warn_trace == "no_tracer_warning":
                from torch.jit import TracerWarning

                warnings.filterwarnings("ignore", category=TracerWarning)
            return scoped_graph(self._model, self._inputs, self._names)

    def _ancestors(self, chain: list[str]) -> set[str]:
        if self._ancestor_mode == "caller":
            return set(chain)
        parts = self._names.aliases.get(chain[-1], chain[-1]).split(".")
        return {""} | {".".join(parts[:k]) for k in range(1, len(parts) + 1)}

    def _ignored(self, kind: str) -> bool:
        if kind in self._ignored_ops:
            return True
        return kind.startswith("prim::") and not kind.startswith(
            ("prim::PythonOp", "prim::CallFunction")
        )

    def _analyze(self) -> Statistics:
        if self._stats is not None:
            return self._stats
        graph = self._trace()
        counts: dict[str, Counter[str]] = {name: Counter() for name in self._names.modules}
        unsupported: dict[str, Counter[str]] = {name: Counter() for name in self._names.modules}
        seen: set[str] = set()
        for node in nodes(graph):
            kind, chain = op_kind(node), scopes(node)
            ancestors = self._ancestors(chain)
            seen.update(chain, ancestors)
            handle = self._op_handles.get(kind)
            if handle is None:
                if not self._ignored(kind):
                    for name in ancestors:
                        unsupported[name][kind] += 1
                continue
            result = _as_counter(kind, handle(list(node.inputs()), list(node.outputs())))
            for name in ancestors:  # a set: an op counts once per module
                counts[name] += result
        stats = Statistics(counts, unsupported, set(self._names.modules) - seen)
        self._stats = stats
        self._warn(stats)
        return stats

    def _warn(self, stats: Statistics) -> None:
        if self._enable_warn_unsupported_ops:
            for kind, times in stats.unsupported_ops[""].items():
                print_log(
                    f"Unsupported operator {kind} encountered {times} time(s): no handle "
                    "counts it (set one with set_op_handle)", "current", logging.WARNING,
                )  # fmt: skip
        uncalled = stats.uncalled_mods & _callable_modules(self._names)
        if self._enable_warn_uncalled_mods and uncalled:
            print_log(
                "These submodules were never called during the trace (unused, called "
                "through another method than forward, or their result was unused); their "
                "statistics are zero, while what they ran still counts for the module "
                f"that called them: {_listing(uncalled)}", "current", logging.WARNING,
            )  # fmt: skip


def _listing(names: Iterable[str]) -> str:
    return ", ".join(sorted(names))
