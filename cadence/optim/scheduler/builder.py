"""Build parameter schedulers from the ``param_scheduler`` config, as mmengine's runner does."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from torch.optim import Optimizer

from ...registry import PARAM_SCHEDULERS, BuildError, Registry, RegistryError, config_location
from ...registry.constraints import raise_if_violated, rejected
from ...registry.root import set_scheduler_build_func
from ...utils import did_you_mean
from .base import _ParamScheduler, raw_optimizer

_ROOT_KEY = "param_scheduler"
# Keys the builder consumes itself; offered as did-you-mean candidates too.
_BUILDER_KEYS = ("type", "_scope_", "convert_to_iter_based", "epoch_length")


def _where(cfg: Any, key_path: str | None) -> str:
    remembered, origin = config_location(cfg)
    parts = []
    path = remembered or key_path
    if path:
        parts.append(f"config key '{path}'")
    if origin:
        parts.append(f"defined at {origin}")
    return f" ({', '.join(parts)})" if parts else ""


def _resolve_lazy(obj: Any) -> Any:
    build = getattr(obj, "__cadence_lazy_build__", None)
    return build() if callable(build) else obj


def _check_arguments(cls: type, args: Mapping[str, Any], where: str) -> None:
    """Raise :class:`BuildError` naming unknown (with did-you-mean) and missing arguments."""
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return
    params = sig.parameters
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    named = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    problems = []
    if not accepts_any:
        for arg in args:
            if arg not in named:
                hint = did_you_mean(arg, [*named, *_BUILDER_KEYS])
                problems.append(f"unexpected argument '{arg}'.{hint}")
    missing = [n for n in named if params[n].default is inspect.Parameter.empty and n not in args]
    if missing:
        problems.append("missing required argument(s) " + ", ".join(f"'{m}'" for m in missing))
    if problems:
        raise BuildError(
            f"cannot build {cls.__name__}{where}: {'; '.join(problems)}\n"
            f"  accepted signature: {cls.__name__}{sig}"
        )


def build_scheduler_from_cfg(
    cfg: Mapping[str, Any],
    registry: Registry = PARAM_SCHEDULERS,
    default_args: Mapping[str, Any] | None = None,
    key_path: str | None = None,
) -> Any:
    """Build one scheduler from ``dict(type=..., **kwargs)``.

    ``default_args`` fill missing keys (``optimizer``, ``epoch_length``). With
    ``convert_to_iter_based=True`` an epoch-based config is built through
    ``build_iter_from_epoch`` with ``epoch_length`` iterations per epoch.
    Classes that are not cadence schedulers (e.g. torch's) get the bare torch
    optimizer. Usable as a registry ``build_func``.
    """
    if not isinstance(cfg, Mapping):
        raise TypeError(
            f"a parameter scheduler config{_where(cfg, key_path)} must be a dict, "
            f"got {type(cfg).__name__}"
        )
    args = dict(cfg.items())
    for name, value in (default_args or {}).items():
        args.setdefault(name, value)
    return _build(args, cfg, registry, key_path)


def _build(args: dict[str, Any], source: Any, registry: Registry, key_path: str | None) -> Any:
    """Build from the argument dict ``args``; ``source`` is the config node, for locations."""
    where = _where(source, key_path)
    if "type" not in args:
        keys = ", ".join(repr(k) for k in source) or "nothing"
        raise RegistryError(f"parameter scheduler config{where} has no 'type' key (it has {keys})")
    scope = args.pop("_scope_", None)
    convert = args.pop("convert_to_iter_based", False)
    scheduler_type = _resolve_lazy(args.pop("type"))
    with registry.switch_scope_and_registry(scope) as active:
        if isinstance(scheduler_type, str):
            remembered, origin = config_location(source)
            cls = active.lookup(scheduler_type, key_path=remembered or key_path, origin=origin)
        elif inspect.isclass(scheduler_type):
            cls = scheduler_type
        else:
            raise TypeError(
                f"type{where} must be a registered scheduler name or a class, "
                f"got {type(scheduler_type).__name__} {scheduler_type!r}"
            )
        args = {k: _resolve_lazy(v) for k, v in args.items()}
        epoch_length = args.pop("epoch_length", None)
        if not issubclass(cls, _ParamScheduler):
            return _build_foreign(cls, args, convert, where, (source, key_path))
        if convert:
            _check_convertible(cls, args, epoch_length, where)
            _check_arguments(cls, args, where)
            return _call(cls.build_iter_from_epoch, cls, args, where, (source, key_path),
                         epoch_length=epoch_length)  # fmt: skip
        _check_arguments(cls, args, where)
        return _call(cls, cls, args, where, (source, key_path))


def _check_convertible(cls: type, args: Mapping[str, Any], epoch_length: Any, where: str) -> None:
    if not args.get("by_epoch", True):
        raise ValueError(
            f"{cls.__name__}{where}: convert_to_iter_based=True needs an epoch-based "
            "scheduler, but by_epoch=False"
        )
    if epoch_length is None:
        raise ValueError(
            f"{cls.__name__}{where}: convert_to_iter_based=True needs epoch_length (the "
            "number of iterations per epoch, usually len(train_dataloader)); pass "
            "build_param_schedulers(..., epoch_length=...)"
        )


def _build_foreign(
    cls: type, args: dict[str, Any], convert: bool, where: str, located: tuple[Any, str | None]
) -> Any:
    if convert:
        raise ValueError(
            f"{cls.__name__}{where} is not a cadence parameter scheduler and cannot be "
            "converted to iteration-based"
        )
    optimizer = args.get("optimizer")
    if optimizer is not None and not isinstance(optimizer, Optimizer):
        args["optimizer"] = raw_optimizer(optimizer)
    _check_arguments(cls, args, where)
    return _call(cls, cls, args, where, located)


def _call(
    func: Any, cls: type, args: Mapping[str, Any], where: str,
    located: tuple[Any, str | None], **extra: Any,
) -> Any:  # fmt: skip
    """``func(**args, **extra)``; a value the scheduler rejects is named by its config key
    (``located``: the config node and its key path)."""
    source, key_path = located
    key_path = config_location(source)[0] or key_path
    raise_if_violated(cls, args, source, key_path)
    try:
        return func(**args, **extra)
    except Exception as exc:
        value_error = rejected(cls, args, exc, source, key_path)
        if value_error is not None:
            raise value_error from exc
        add_note = getattr(exc, "add_note", None)
        if add_note is not None:
            add_note(f"while building {cls.__name__}{where}")
        raise


def _is_named_wrappers(optim_wrapper: Any) -> bool:
    """True for a mapping of names to optimizer wrappers (``OptimWrapperDict``)."""
    if isinstance(optim_wrapper, Optimizer):
        return False
    if isinstance(optim_wrapper, Mapping):
        return True
    return callable(getattr(type(optim_wrapper), "keys", None)) and callable(
        getattr(type(optim_wrapper), "__getitem__", None)
    )


def _is_built(obj: Any) -> bool:
    return isinstance(obj, _ParamScheduler) or (
        not isinstance(obj, Mapping) and callable(getattr(obj, "step", None))
    )


def _build_list(
    optim_wrapper: Any,
    cfg: Any,
    key_path: str,
    epoch_length: int | None,
    max_epochs: int | None,
    max_iters: int | None,
) -> list[Any]:
    if cfg is None:
        return []
    if isinstance(cfg, Mapping) or _is_built(cfg):
        items, paths = [cfg], [key_path]
    elif isinstance(cfg, (list, tuple)):
        items, paths = list(cfg), [f"{key_path}.{i}" for i in range(len(cfg))]
    else:
        raise TypeError(
            f"config key '{key_path}' must be a scheduler config dict, a list of them or a "
            f"built scheduler, got {type(cfg).__name__}"
        )
    schedulers = []
    for item, path in zip(items, paths):
        if _is_built(item):
            schedulers.append(item)
            continue
        if not isinstance(item, Mapping):
            raise TypeError(
                f"config key '{path}' must be a scheduler config dict or a built scheduler, "
                f"got {type(item).__name__}"
            )
        args = dict(item.items())
        if "end" not in args:
            default_end = max_epochs if args.get("by_epoch", True) else max_iters
            if default_end is not None:
                args["end"] = default_end
        args.setdefault("optimizer", optim_wrapper)
        if epoch_length is not None:
            args.setdefault("epoch_length", epoch_length)
        schedulers.append(_build(args, item, PARAM_SCHEDULERS, path))
    return schedulers


def build_param_schedulers(
    optim_wrapper: Any,
    cfg: Any,
    *,
    epoch_length: int | None = None,
    max_epochs: int | None = None,
    max_iters: int | None = None,
) -> list[Any] | dict[str, list[Any]]:
    """Build the schedulers of the ``param_scheduler`` config for ``optim_wrapper``.

    ``cfg`` is one config dict, a list of them, or already-built schedulers
    (returned as they are). For named wrappers (an ``OptimWrapperDict`` or any
    mapping of names to wrappers) the result is a dict of lists: ``cfg`` may be
    a dict keyed by wrapper name, or one config/list applied to each.

    A config without ``end`` ends at ``max_epochs`` (epoch-based) or
    ``max_iters`` (iteration-based) when those are given, as mmengine's runner
    does. ``convert_to_iter_based=True`` needs ``epoch_length``.
    """
    options = (epoch_length, max_epochs, max_iters)
    if not _is_named_wrappers(optim_wrapper):
        if isinstance(cfg, Mapping) and "type" not in cfg and cfg:
            raise ValueError(
                f"config key '{_ROOT_KEY}' is a dict without 'type', i.e. one scheduler list "
                f"per optimizer wrapper (keys {sorted(cfg)}), but the optimizer wrapper is a "
                f"single {type(optim_wrapper).__name__}"
            )
        raw_optimizer(optim_wrapper)
        return _build_list(optim_wrapper, cfg, _ROOT_KEY, *options)
    names = list(optim_wrapper.keys())
    if isinstance(cfg, Mapping) and "type" not in cfg:
        unknown = [key for key in cfg if key not in names]
        if unknown:
            raise KeyError(
                f"config key '{_ROOT_KEY}' has entries {unknown} that name no optimizer "
                f"wrapper (wrappers: {names}).{did_you_mean(str(unknown[0]), names)}"
            )
        missing = [name for name in names if name not in cfg]
        if missing:
            raise KeyError(
                f"config key '{_ROOT_KEY}' gives schedulers per optimizer wrapper but has no "
                f"entry for {missing}; add one (an empty list for none)"
            )
        return {
            name: _build_list(optim_wrapper[name], cfg[name], f"{_ROOT_KEY}.{name}", *options)
            for name in names
        }
    return {name: _build_list(optim_wrapper[name], cfg, _ROOT_KEY, *options) for name in names}


set_scheduler_build_func(build_scheduler_from_cfg)  # PARAM_SCHEDULERS.build uses it
