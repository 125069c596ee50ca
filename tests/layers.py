"""The layer order of cadence's packages: the one place it is written down.

Imports point down: a module may import its own layer and the layers below it, never one
above (type-only imports under ``if TYPE_CHECKING:`` included). Within a layer any
direction is allowed; the cycle check (tests/test_import_graph.py) still forbids cycles.
Every package under cadence/ must be placed here. docs/architecture.md ("Layers") draws
this picture; change both together.
"""

from __future__ import annotations

#: Top to bottom. ``cadence`` is the root package (``cadence/__init__.py``).
LAYERS: tuple[tuple[str, ...], ...] = (
    # entry points and doors: the command, the predictor, sweeps, test base classes,
    # the mmengine alias
    ("cadence", "__main__", "_exports", "cli", "inference", "sweep", "testing", "compat"),
    # the Runner and its parts
    ("runner",),
    # what the runner drives: hooks decide when, loops iterate, strategies place and
    # wrap, the checkpoint manager stores
    ("hooks", "loops", "strategies", "checkpoint"),
    # what a run is made of
    (
        "evaluator",
        "model",
        "optim",
        "dataset",
        "visualization",
        "transforms",
        "structures",
        "analysis",
    ),  # fmt: skip
    # services and contracts: logging, registries, configs, file I/O, process groups, what
    # keeps a run going through hangs, preemption and restarts, and the runner's interface
    # that everything above programs against
    ("logging", "registry", "config", "fileio", "dist", "resilience", "contracts"),
    # plain helpers with no cadence dependency above them
    ("utils", "device", "version"),
)
