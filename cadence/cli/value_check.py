"""Values that a config's types and arguments cannot catch: section shapes, sections that
need each other and the runner's own keys of ``train_cfg``. What a component's arguments
may be is declared beside the component (:mod:`cadence.registry.constraints`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: Runner sections and the shape each must have.
SHAPES: dict[str, tuple[type, ...]] = {
    "default_hooks": (Mapping,), "custom_hooks": (list, tuple), "env_cfg": (Mapping,),
    "randomness": (Mapping,), "train_cfg": (Mapping,), "val_cfg": (Mapping,),
    "test_cfg": (Mapping,), "train_dataloader": (Mapping,), "val_dataloader": (Mapping,),
    "test_dataloader": (Mapping,), "log_processor": (Mapping,), "param_scheduler": (Mapping,
    list, tuple), "optim_wrapper": (Mapping,),
}  # fmt: skip
#: several validation/test sets: a list of dataloaders, or a dict of them by name
SHAPES["val_dataloader"] = SHAPES["test_dataloader"] = (Mapping, list, tuple)
_SHAPE_NAMES: dict[Any, str] = {Mapping: "a dict", list: "a list", tuple: "a tuple"}

#: The sections each mode needs together (as the runner requires).
COMPANIONS = {
    "train": ("train_dataloader", "train_cfg", "optim_wrapper"),
    "val": ("val_dataloader", "val_cfg", "val_evaluator"),
    "test": ("test_dataloader", "test_cfg", "test_evaluator"),
}


#: (key, test, what it must be) for the keys of train_cfg that the runner reads itself.
LOOP_RULES: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("resume_policy", lambda v: v in ("keep", "stretch"), "'keep' or 'stretch'"),
)

Report = Callable[[str, str], None]


def check_sections(cfg: Any, report: Report) -> None:
    """Shapes of the runner's sections, the sections each mode needs together, and URLs
    in path keys that no installed storage reaches."""
    from ..fileio import check_url

    for key in ("work_dir", "load_from", "resume"):
        problem = check_url(cfg.get(key), key)
        if problem is not None:
            report(key, problem)
    for key, shapes in SHAPES.items():
        value = cfg.get(key)
        if value is not None and not isinstance(value, shapes):
            names = " or ".join(_SHAPE_NAMES.get(s, s.__name__) for s in shapes)
            report(key, f"must be {names}, got {type(value).__name__} {value!r}")
    default_hooks = cfg.get("default_hooks")
    if isinstance(default_hooks, Mapping):
        for name, hook in default_hooks.items():
            if hook is not None and not isinstance(hook, Mapping) and not hasattr(hook, "priority"):
                report(f"default_hooks.{name}", f"must be a dict(type=...) or None, got {hook!r}")
    custom = cfg.get("custom_hooks")
    if isinstance(custom, (list, tuple)):
        for i, hook in enumerate(custom):
            if not isinstance(hook, Mapping) and not hasattr(hook, "priority"):
                report(f"custom_hooks.{i}", f"must be a dict(type=...) or a hook, got {hook!r}")
    from ..loops.eval_sets import eval_sets_problem

    for mode in ("val", "test"):  # several sets: lists or dicts by name that must pair up
        problem = eval_sets_problem(cfg.get(f"{mode}_dataloader"), cfg.get(f"{mode}_evaluator"),
                                    mode)  # fmt: skip
        if problem is not None:
            report(f"{mode}_evaluator", problem)
    for mode, keys in COMPANIONS.items():
        given = [k for k in keys if cfg.get(k) is not None]
        if given and len(given) != len(keys):
            missing = [k for k in keys if k not in given]
            report(
                given[0],
                f"is set, so {' and '.join(missing)} must be too: to {mode}, the runner needs "
                f"{', '.join(keys)} (or remove {', '.join(given)})",
            )


def check_rules(
    node: Any, path: str, rules: tuple[tuple[str, Callable[[Any], bool], str], ...],
    report: Report,
) -> None:  # fmt: skip
    """Check ``node``'s keys named in ``rules``."""
    if not isinstance(node, Mapping):
        return
    for key, test, expected in rules:
        if key in node and node[key] is not None and not test(node[key]):
            report(f"{path}.{key}", f"must be {expected}, got {node[key]!r}")
