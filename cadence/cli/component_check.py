"""Check one ``dict(type=...)`` config against a registry without building it.

:class:`ComponentChecker` resolves a component's ``type`` in the registry it is
built from and checks its keyword arguments against the constructor's
signature, counting the arguments its builder passes itself. Problems are
collected (with the key path and the ``file:line`` that set it), not raised.

Nested ``dict(type=...)`` values inside a component (a model's backbone, a
pipeline's sub-transforms) are passed to their owner unbuilt, so which registry
they belong to is a guess: they are checked when some registry knows the name,
reported as an error when the name looks like a misspelling of a registered
one, and otherwise as a warning.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..config import Config
from ..registry import FUNCTIONS, ROOT_REGISTRIES, WEIGHT_INITIALIZERS, Registry
from ..registry.constraints import declared_problems, violations
from ..utils import did_you_mean
from .common import describe_origin

NOT_ARGUMENTS = ("type", "_scope_")


@dataclass(frozen=True)
class Problem:
    """One finding: the config key path, what is wrong, and where it was set."""

    key: str
    message: str
    origin: str | None = None
    warning: bool = False

    def __str__(self) -> str:
        where = f" ({self.origin})" if self.origin else ""
        kind = "warning" if self.warning else "error"
        return f"{kind}: {self.key}{where}: {self.message}"


def _resolve_lazy(obj: Any) -> Any:
    build = getattr(obj, "__cadence_lazy_build__", None)
    return build() if callable(build) else obj


def _name_of(obj: Any) -> str:
    return getattr(obj, "__name__", None) or repr(obj)


def join(path: str, key: Any) -> str:
    """The key path of ``key`` inside ``path``."""
    return f"{path}.{key}" if path else str(key)


def as_items(value: Any, path: str) -> list[tuple[str, Any]]:
    """``(key path, item)`` for each item of a list/tuple, or of one value."""
    if isinstance(value, (list, tuple)):
        return [(join(path, i), item) for i, item in enumerate(value)]
    return [(path, value)]


class ComponentChecker:
    """Check ``dict(type=...)`` components against registries; collect :class:`Problem`\\ s.

    ``cfg`` is the loaded config, asked where each key path was set.
    """

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self.problems: list[Problem] = []
        self.checked = 0

    # ---------------------------------------------------------------- output
    def _origin(self, key: str) -> str | None:
        try:
            origin = self.cfg.provenance(key)
        except Exception:  # a path the config does not hold (a default)
            return None
        return describe_origin(origin) if origin is not None else None

    def _report(self, key: str, message: str, warning: bool = False) -> None:
        self.problems.append(Problem(key, message, self._origin(key), warning))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if not p.warning]

    # ------------------------------------------------------------ components
    def resolve(
        self, node: Any, path: str, registry: Registry, default_type: str | None = None
    ) -> Any:
        """The class/function that ``node``'s ``type`` names in ``registry``, or ``None``
        (after reporting why) when it cannot be found."""
        if not isinstance(node, Mapping):
            return None  # an object built in code, or a value checked elsewhere
        target = node.get("type", default_type)
        if target is None:
            self._report(
                path,
                f"has no 'type'; set type= to a name in registry '{registry.name}'"
                + self._examples(registry),
            )
            return None
        type_path = join(path, "type") if "type" in node else path
        try:
            target = _resolve_lazy(target)
        except Exception as exc:
            self._report(type_path, f"cannot import {target!r}: {exc}")
            return None
        if not isinstance(target, str):
            if callable(target):
                return target
            self._report(type_path, f"must be a registered name or a class, got {target!r}")
            return None
        with registry.switch_scope_and_registry(node.get("_scope_")) as active:
            found = active.get(target)
            if found is None:
                candidates = active._candidate_names()
                self._report(
                    type_path,
                    f"'{target}' is not registered in registry '{active.name}' "
                    f"(scope '{active.scope}').{did_you_mean(target, candidates)}",
                )
        return found

    @staticmethod
    def _examples(registry: Registry) -> str:
        names = sorted(registry.module_dict)
        if not names:
            return ""
        more = ", ..." if len(names) > 6 else ""
        return f" ({', '.join(names[:6])}{more})"

    def check_args(
        self,
        target: Any,
        args: Mapping[str, Any],
        path: str,
        provided: Iterable[str] = (),
        partial: bool = False,
        stand_ins: Mapping[str, Any] | None = None,
        owner_built: bool = False,
    ) -> None:
        """Report arguments ``target`` does not take, required ones nobody gives and values
        its constraints reject (:func:`~cadence.registry.constraints.violations`).

        ``provided`` are the names the builder passes itself (``stand_ins``: values for
        them, when the constraints build a throw-away ``target``); ``partial`` skips the
        missing-argument check and building (functions called later with more arguments).
        ``owner_built``: a part nested in another component's arguments, which its owner
        builds and may take arguments out of first (mmcv's ``build_norm_layer`` takes
        ``requires_grad``), so an unknown argument there is an error only when it looks
        like a misspelling of one ``target`` takes, and a warning otherwise.
        """
        try:
            params = inspect.signature(target).parameters
        except (TypeError, ValueError):
            return
        named = [
            n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        ]
        if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
            for arg in args:
                if arg not in named:
                    hint = did_you_mean(arg, named)
                    unsure = owner_built and not hint
                    self._report(
                        join(path, arg),
                        f"{_name_of(target)} takes no argument '{arg}'."
                        f"{hint or ' It takes: ' + ', '.join(named) + '.'}"
                        + (
                            " Its owner builds it and may take that argument itself."
                            if unsure
                            else ""
                        ),
                        warning=unsure,
                    )
        self.check_values(target, {k: v for k, v in args.items() if k in named}, path,
                          None if partial else stand_ins or {})  # fmt: skip
        if partial:
            return
        given = set(args) | set(provided)
        missing = [n for n in named if params[n].default is params[n].empty and n not in given]
        if missing:
            names = ", ".join(f"'{m}'" for m in missing)
            self._report(path, f"{_name_of(target)} needs argument(s) {names}, which are not set")

    def check_values(
        self, target: Any, args: Mapping[str, Any], path: str,
        stand_ins: Mapping[str, Any] | None = None,
    ) -> None:  # fmt: skip
        """Report the values of ``args`` that ``target``'s constraints reject; without
        ``stand_ins`` only the declared rules and annotations, never building it."""
        if stand_ins is None:
            found: Mapping[str | None, str] = declared_problems(target, args)
        else:
            found = violations(target, args, stand_ins)
        for name, problem in found.items():
            self._report(join(path, name) if name else path, problem)

    def component(
        self,
        node: Any,
        path: str,
        registry: Registry,
        default_type: str | None = None,
        provided: Iterable[str] = (),
        skip: Iterable[str] = (),
        nested: Registry | None = None,
        partial: bool = False,
        stand_ins: Mapping[str, Any] | None = None,
        owner_built: bool = False,
    ) -> Any:
        """Check one ``dict(type=...)``: its type, its arguments (except ``skip``; see
        :meth:`check_args`) and, when ``nested`` is given, the ``type``\\ s nested in
        its arguments. Returns what ``type`` names, or ``None``."""
        target = self.resolve(node, path, registry, default_type)
        if target is None:
            return None
        self.checked += 1
        args = {k: v for k, v in node.items() if k not in NOT_ARGUMENTS and k not in skip}
        self.check_args(target, args, path, provided, partial, stand_ins, owner_built)
        if nested is not None:
            for key, value in args.items():
                self.nested(value, join(path, key), nested)
        return target

    def nested(self, value: Any, path: str, registry: Registry) -> None:
        """Check ``type``\\ s found inside a component's arguments, where possible."""
        if isinstance(value, (list, tuple)):
            for key, item in as_items(value, path):
                self.nested(item, key, registry)
            return
        if not isinstance(value, Mapping):
            return
        name = value.get("type")
        if name is None:
            for key, item in value.items():
                self.nested(item, join(path, key), registry)
            return
        # The owner builds nested parts itself and may pass more arguments (a norm
        # layer's channels...), so only unknown arguments are reported for them.
        if not isinstance(name, str):
            self.component(value, path, registry, nested=registry, partial=True,
                           owner_built=True)  # fmt: skip
            return
        if path.rsplit(".", 1)[-1] == "init_cfg":
            self.component(value, path, WEIGHT_INITIALIZERS)
            return
        owner = self._owner_of(name, registry)
        if owner is not None:
            self.component(value, path, owner, nested=owner, partial=True, owner_built=True)
            return
        candidates = registry._candidate_names()
        hint = did_you_mean(name, candidates)
        message = f"'{name}' is not registered in registry '{registry.name}' nor in any other."
        if hint:
            self._report(join(path, "type"), message + hint)
        else:
            self._report(
                join(path, "type"),
                message + " It is passed unbuilt to its owner, so it was not checked.",
                warning=True,
            )

    @staticmethod
    def _owner_of(name: str, preferred: Registry) -> Registry | None:
        for registry in (preferred, *ROOT_REGISTRIES):
            with registry.switch_scope_and_registry(None) as active:
                if active.get(name) is not None:
                    return registry
        return None

    def function(self, node: Any, path: str) -> None:
        """A ``FUNCTIONS`` name or ``dict(type=name, **kwargs)`` bound before the call."""
        if isinstance(node, str):
            node = {"type": node}
        target = self.resolve(node, path, FUNCTIONS)
        if target is not None:
            self.checked += 1
            args = {k: v for k, v in node.items() if k not in NOT_ARGUMENTS}
            self.check_args(target, args, path, partial=True)
