"""Values that a config's types and arguments cannot catch: section shapes, sections that
need each other, loop lengths and intervals, dataloader options, and argument types
from constructors' annotations (``batch_size: int``, ``lr: float``)."""

from __future__ import annotations

import numbers
import types
import typing
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


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _natural(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _flag(value: Any) -> bool:
    return isinstance(value, bool)


def _number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


#: (key, test, what it must be) for train_cfg and for dataloaders.
LOOP_RULES: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("max_epochs", _positive_int, "an int > 0"),
    ("max_iters", _positive_int, "an int > 0"),
    ("val_interval", _positive_int, "an int >= 1 (validate every N epochs or iterations)"),
    ("val_begin", _natural, "an int >= 0"),
    ("resume_policy", lambda v: v in ("keep", "stretch"), "'keep' or 'stretch'"),
)
LOADER_RULES: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("batch_size", _positive_int, "an int > 0 (samples per process and step)"),
    ("num_workers", _natural, "an int >= 0"),
    ("shuffle", _flag, "True or False"),
    ("drop_last", _flag, "True or False"),
    ("pin_memory", _flag, "True or False"),
    ("persistent_workers", _flag, "True or False"),
    ("prefetch_factor", lambda v: v is None or _positive_int(v), "an int > 0 or None"),
    ("timeout", lambda v: _number(v) and v >= 0, "a number of seconds >= 0"),
)  # fmt: skip


OPTIMIZER_RULES: tuple[tuple[str, Callable[[Any], bool], str], ...] = tuple(
    (key, _number, "a number") for key in ("lr", "weight_decay", "momentum", "eps")
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


def _simple(annotation: Any) -> tuple[type, ...] | None:
    """The plain types an annotation allows (``int``, ``float | None``...), or None when
    it is anything richer (then nothing is checked)."""
    plain = (int, float, bool, str)
    if annotation in plain:
        return (annotation,)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        parts = typing.get_args(annotation)
        if all(p in plain or p is type(None) for p in parts):
            return tuple(parts)
    return None


def _matches(value: Any, allowed: tuple[type, ...]) -> bool:
    if value is None:
        return type(None) in allowed
    if isinstance(value, bool):
        return bool in allowed
    if isinstance(value, int) and (int in allowed or float in allowed):
        return True
    return any(t not in (int, bool) and isinstance(value, t) for t in allowed)


def _describe(allowed: tuple[type, ...]) -> str:
    return " or ".join("None" if t is type(None) else t.__name__ for t in allowed)


def check_arg_types(target: Any, args: Mapping[str, Any], path: str, report: Report) -> None:
    """Arguments whose constructor annotation is a plain type (``int``, ``float``,
    ``bool``, ``str``, optionally ``| None``) and whose value is not of it."""
    function = getattr(target, "__init__") if isinstance(target, type) else target  # noqa: B009
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - unresolvable annotations: nothing to check
        return
    for name, value in args.items():
        allowed = _simple(hints.get(name))
        if allowed is None or isinstance(value, Mapping) or _matches(value, allowed):
            continue
        report(f"{path}.{name}", f"must be {_describe(allowed)}, got {value!r}")
