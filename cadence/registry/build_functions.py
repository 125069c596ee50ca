"""Turn ``dict(type=..., **kwargs)`` into objects, with errors that name the config."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, Protocol

from ..utils.suggest import did_you_mean
from .constraints import raise_if_violated, rejected
from .errors import BuildError, RegistryError, describe_location


class BuildRegistry(Protocol):
    """What :func:`build_from_cfg` uses of a :class:`~cadence.registry.Registry` (a view,
    so that this module need not import the registry module that imports it)."""

    @property
    def name(self) -> str: ...

    def switch_scope_and_registry(
        self, scope: str | None
    ) -> AbstractContextManager[BuildRegistry]: ...

    def lookup(self, key: str, key_path: str | None = None, origin: str | None = None) -> Any: ...


def config_location(cfg: Any) -> tuple[str | None, str | None]:
    """Return the (key path, ``file:line``) a loaded config node remembers, if any."""
    attrs = getattr(cfg, "__dict__", None) or {}
    return attrs.get("_cadence_key_path"), attrs.get("_cadence_origin")


def located_copy(cfg: Mapping[str, Any]) -> dict[str, Any]:
    """A shallow copy of a config to change before building; the copy of a loaded config
    node still knows where it was set (so that build errors name the config key)."""
    return cfg.copy() if isinstance(cfg, dict) else dict(cfg)


def _resolve_lazy(obj: Any) -> Any:
    build = getattr(obj, "__cadence_lazy_build__", None)
    return build() if callable(build) else obj


def _type_name(obj: Any) -> str:
    return getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None) or repr(obj)


def signature_problem(obj: Any, args: Mapping[str, Any]) -> str | None:
    """Explain why ``obj(**args)`` cannot bind, or return ``None`` if it can."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    try:
        sig.bind(**args)
    except TypeError as exc:
        params = sig.parameters
        takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
        keyword_names = [
            n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        problems: list[str] = []
        if not takes_kwargs:
            for arg in args:
                if arg not in params or params[arg].kind is inspect.Parameter.POSITIONAL_ONLY:
                    problems.append(
                        f"unexpected argument '{arg}'.{did_you_mean(arg, keyword_names)}"
                    )
        missing = [
            n
            for n, p in params.items()
            if p.default is p.empty
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and n not in args
        ]
        if missing:
            problems.append("missing required argument(s) " + ", ".join(f"'{m}'" for m in missing))
        return "; ".join(problems) if problems else str(exc)
    return None


def is_config(cfg: Any) -> bool:
    """Whether ``cfg`` is a :class:`~cadence.config.Config` (a file's whole config)."""
    if isinstance(cfg, Mapping):
        return False
    from ..config import Config

    return isinstance(cfg, Config)


def as_config_mapping(cfg: Any) -> Any:
    """``cfg`` as a mapping to build from: a dict as is, a ``Config`` as the dict of its
    top-level keys (as mmengine, ``build`` takes either); anything else unchanged."""
    if is_config(cfg):
        return {key: cfg[key] for key in cfg}
    return cfg


def build_from_cfg(
    cfg: Any,
    registry: BuildRegistry,
    default_args: Mapping[str, Any] | None = None,
    key_path: str | None = None,
) -> Any:
    """Build an object from ``cfg``: ``type`` picks the class, other keys are kwargs.

    ``type`` may be a registered name, ``'scope.Name'``, a dotted import path or
    the class/function itself; ``_scope_`` switches the scope for this build.
    Nested dicts are passed through unbuilt. ``default_args`` fill keys that
    ``cfg`` lacks. ``key_path`` (e.g. ``'model.backbone'``) names the config
    location in error messages; configs loaded from files remember their own.
    """
    if not callable(getattr(registry, "switch_scope_and_registry", None)):
        raise TypeError(  # mmengine's words: under the alias the class is mmengine.Registry
            f"registry must be a mmengine.Registry object, but got {type(registry)} "
            "(a cadence.registry.Registry)"
        )
    cfg = as_config_mapping(cfg)
    remembered_path, origin = config_location(cfg)
    key_path = key_path or remembered_path
    located = describe_location(key_path, origin)
    if not isinstance(cfg, Mapping):
        raise TypeError(f"cfg should be a dict, ConfigDict or Config, but got {type(cfg)}{located}")
    default_args = as_config_mapping(default_args)
    if default_args is not None and not isinstance(default_args, Mapping):
        raise TypeError(f"default_args must be a dict or None, got {type(default_args).__name__}")
    args = dict(cfg.items())
    for name, value in (default_args or {}).items():
        args.setdefault(name, value)
    if "type" not in args:
        keys = ", ".join(repr(k) for k in cfg) or "nothing"
        raise RegistryError(
            f'config{located} must contain the key "type" (it has {keys}); set type= to one of '
            f"the names in registry '{registry.name}'"
        )
    scope = args.pop("_scope_", None)
    obj_type = _resolve_lazy(args.pop("type"))
    with registry.switch_scope_and_registry(scope) as active:
        if isinstance(obj_type, str):
            obj_cls = active.lookup(obj_type, key_path=key_path, origin=origin)
        elif callable(obj_type):
            obj_cls = obj_type
        else:
            raise TypeError(
                f"type{located} must be a str or valid type, but got {type(obj_type)} "
                f"({obj_type!r}): a registered name or a class/function"
            )
        args = {k: _resolve_lazy(v) for k, v in args.items()}
        raise_if_violated(obj_cls, args, cfg, key_path)
        try:
            if "name" in args and _is_managed(obj_cls):  # as mmengine: the named instance
                return obj_cls.get_instance(**args)  # (made now, or the one that exists)
            return obj_cls(**args)
        except TypeError as exc:
            problem = signature_problem(obj_cls, args)
            if problem is None:
                value_error = rejected(obj_cls, args, exc, cfg, key_path)
                if value_error is not None:
                    raise value_error from exc
                _add_note(exc, f"while building {_type_name(obj_cls)}{located}")
                raise
            sig = inspect.signature(obj_cls)
            raise BuildError(
                f"cannot build {_type_name(obj_cls)} from registry '{active.name}'{located}: "
                f"{problem}\n  accepted signature: {_type_name(obj_cls)}{sig}"
            ) from exc
        except Exception as exc:
            value_error = rejected(obj_cls, args, exc, cfg, key_path)
            if value_error is not None:
                raise value_error from exc
            _add_note(exc, f"while building {_type_name(obj_cls)}{located}")
            raise


def _add_note(exc: BaseException, note: str) -> None:
    add_note = getattr(exc, "add_note", None)
    if add_note is not None:
        add_note(note)


def _is_managed(obj_cls: Any) -> bool:
    """Whether ``obj_cls`` keeps named instances (a :class:`ManagerMixin` subclass)."""
    from ..utils.manager import ManagerMixin

    return inspect.isclass(obj_cls) and issubclass(obj_cls, ManagerMixin)
