"""Several validation (or test) sets: pairing ``val_dataloader`` with ``val_evaluator``.

``val_dataloader`` may be one dataloader (a config dict with a ``dataset``, or a
built loader), a list of them, or a dict of them by name. With several sets
``val_evaluator`` is a list of the same length, a dict with the same names, or
one evaluator config that every set builds for itself. List sets are named by
their position (``'0'``, ``'1'``...). Each set's metrics are prefixed with its
name (``'noisy/accuracy/top1'``, logged as ``val/noisy/accuracy/top1``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: One set: its name (``None`` for the single, unnamed set), dataloader and evaluator.
EvalSet = tuple[str | None, Any, Any]


def is_single_loader(value: Any) -> bool:
    """Whether ``value`` is one dataloader (a config with ``dataset``, or a built loader)
    rather than a list or a dict of them."""
    if isinstance(value, Mapping):
        if "dataset" in value or "type" in value or not value:
            return True
        return not all(_loader_like(v) for v in value.values())
    return not isinstance(value, (list, tuple))


def _loader_like(value: Any) -> bool:
    """A dataloader config or a built (iterable) loader, as a set of a list or dict."""
    if isinstance(value, Mapping):
        return True
    return hasattr(value, "__iter__") and not isinstance(value, (str, bytes, list, tuple))


def _named_loaders(loaders: Any, path: str) -> dict[str, Any]:
    if isinstance(loaders, (list, tuple)):
        named = {str(i): loader for i, loader in enumerate(loaders)}
    else:
        named = {str(name): loader for name, loader in loaders.items()}
    if not named:
        raise ValueError(f"{path} is an empty list: give at least one set")
    for name, loader in named.items():
        if not name or "/" in name:
            raise ValueError(
                f"{path}: set name {name!r} must be non-empty and without '/' (it prefixes "
                "the set's metric names)"
            )
        if not is_single_loader(loader):
            raise ValueError(
                f"{path}.{name} must be a dataloader config (a dict with 'dataset') or a "
                f"dataloader, got {type(loader).__name__}"
            )
    return named


def _is_shared_evaluator(evaluator: Any) -> bool:
    """One evaluator config for every set: a metric/evaluator config dict."""
    return isinstance(evaluator, Mapping) and ("type" in evaluator or "metrics" in evaluator)


def split_eval_sets(loaders: Any, evaluators: Any, mode: str = "val") -> list[EvalSet]:
    """The sets of ``{mode}_dataloader`` paired with their evaluators (module docstring).

    Raises ``ValueError`` naming the config keys when the two do not pair up:
    lists of different lengths, dicts with different names, or a list with a dict.
    """
    lpath, epath = f"{mode}_dataloader", f"{mode}_evaluator"
    if is_single_loader(loaders):
        return [(None, loaders, evaluators)]
    named = _named_loaders(loaders, lpath)
    names = list(named)
    if _is_shared_evaluator(evaluators):
        return [(name, named[name], _copy(evaluators)) for name in names]
    if isinstance(loaders, (list, tuple)):
        if not isinstance(evaluators, (list, tuple)) or len(evaluators) != len(names):
            got = (
                f"a list of {len(evaluators)}" if isinstance(evaluators, (list, tuple))
                else type(evaluators).__name__
            )  # fmt: skip
            raise ValueError(
                f"{lpath} is a list of {len(names)} dataloaders, so {epath} must be a list of "
                f"{len(names)} evaluators (one per set, in order) or one evaluator config dict "
                f"for every set; got {got}"
            )
        return [(name, named[name], evaluators[i]) for i, name in enumerate(names)]
    if not isinstance(evaluators, Mapping):
        raise ValueError(
            f"{lpath} names its sets ({', '.join(names)}), so {epath} must be a dict with the "
            f"same names or one evaluator config dict; got {type(evaluators).__name__}"
        )
    given = [str(k) for k in evaluators]
    if sorted(given) != sorted(names):
        missing = [n for n in names if n not in given]
        extra = [n for n in given if n not in names]
        parts = [f"missing {', '.join(missing)}"] if missing else []
        parts += [f"unknown {', '.join(extra)}"] if extra else []
        raise ValueError(
            f"{epath} must name the same sets as {lpath} ({', '.join(names)}): " + "; ".join(parts)
        )
    by_name = {str(k): v for k, v in evaluators.items()}
    return [(name, named[name], by_name[name]) for name in names]


def _copy(cfg: Mapping[str, Any]) -> Any:
    """A copy of a shared evaluator config, so that each set builds its own evaluator."""
    import copy

    return copy.deepcopy(cfg)


def prefixed(name: str | None, metrics: Mapping[str, Any]) -> dict[str, Any]:
    """``metrics`` with ``name/`` before each key (as they are for the unnamed set)."""
    if name is None:
        return dict(metrics)
    return {f"{name}/{key}": value for key, value in metrics.items()}


def eval_set_paths(loaders: Any, evaluators: Any, mode: str) -> list[tuple[str, Any, str, Any]]:
    """``(loader key path, loader, evaluator key path, evaluator)`` of each set, for config
    checks; sets that do not pair up (see :func:`split_eval_sets`) get ``None`` evaluators."""
    lpath, epath = f"{mode}_dataloader", f"{mode}_evaluator"
    if is_single_loader(loaders):
        return [(lpath, loaders, epath, evaluators)]
    try:
        sets = split_eval_sets(loaders, evaluators, mode)
    except ValueError:
        sets = [(name, loader, None) for name, loader in _named_loaders_or_empty(loaders)]
    if _is_shared_evaluator(evaluators):  # one config: checked once
        return [
            (f"{lpath}.{name}", loader, epath, evaluators if i == 0 else None)
            for i, (name, loader, _) in enumerate(sets)
        ]
    return [(f"{lpath}.{name}", loader, f"{epath}.{name}", ev) for name, loader, ev in sets]


def _named_loaders_or_empty(loaders: Any) -> list[tuple[str, Any]]:
    if isinstance(loaders, (list, tuple)):
        return [(str(i), loader) for i, loader in enumerate(loaders)]
    return [(str(name), loader) for name, loader in loaders.items()]


def eval_sets_problem(loaders: Any, evaluators: Any, mode: str) -> str | None:
    """Why ``{mode}_dataloader`` and ``{mode}_evaluator`` do not pair up, or None."""
    if loaders is None or evaluators is None:
        return None
    try:
        split_eval_sets(loaders, evaluators, mode)
    except ValueError as exc:
        return str(exc)
    return None
