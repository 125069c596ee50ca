"""The values a component's arguments may take, declared once and used by both
``cadence check`` and the builders.

A component states its constraints in one of two ways, next to its definition:

* :func:`constrain` (or :func:`declare` for a class cadence does not own, such as
  torch's ``DataLoader``) names a :class:`Rule` per argument (``interval=POSITIVE_INT``);
  the rules are read without building anything;
* :func:`validated_by_construction` says that building the class is cheap and has no
  side effects, so its own validation (the ``ValueError``/``TypeError`` its constructor
  raises, as torch's optimizers do for ``lr < 0``) is run by building a throw-away
  instance from stand-ins for what the builder passes itself (an optimizer's
  parameters, a scheduler's optimizer, a sampler's dataset).

Plain annotations (``interval: int``, ``lr: float | None``) are constraints too.
:func:`violations` applies all three and says which argument is at fault;
:func:`raise_if_violated` and :func:`rejected` turn them into one
:class:`ConstraintError` paragraph naming the config key and where it was set.
"""

from __future__ import annotations

import inspect
import numbers
import os
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..config.config_dict import CHILD_ORIGINS_ATTR, ORIGIN_ATTR
from .errors import BuildError


@dataclass(frozen=True)
class Rule:
    """A test on one argument's value and what the value must be, in words."""

    test: Callable[[Any], bool]
    expected: str

    def problem(self, value: Any) -> str | None:
        """``'must be <expected>, got <value>'``, or ``None`` when ``value`` passes."""
        try:
            ok = value is None or bool(self.test(value))
        except Exception:  # noqa: BLE001 - a value the test cannot even look at
            ok = False
        return None if ok else f"must be {self.expected}, got {value!r}"

    def require(self, name: str, value: Any) -> Any:
        """Return ``value``, or raise ``ValueError`` naming ``name`` when it fails."""
        problem = self.problem(value)
        if problem is not None:
            raise ValueError(f"{name} {problem}")
        return value


def _int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


POSITIVE_INT = Rule(lambda v: _int(v) and v > 0, "an int > 0")
NATURAL = Rule(lambda v: _int(v) and v >= 0, "an int >= 0")
NON_NEGATIVE = Rule(lambda v: _real(v) and v >= 0, "a number >= 0")
FLAG = Rule(lambda v: isinstance(v, bool), "True or False")


def one_of(*choices: Any) -> Rule:
    """A rule allowing only ``choices``."""
    return Rule(lambda v: v in choices, " or ".join(repr(c) for c in choices))


@dataclass(frozen=True)
class _ByConstruction:
    stand_ins: Callable[[], dict[str, Any]]
    aliases: Mapping[str, str]


_RULES: dict[type, dict[str, Rule]] = {}
_CONSTRUCTED: dict[type, _ByConstruction] = {}


def declare(cls: type, **rules: Rule) -> None:
    """Constrain the arguments of ``cls`` (and its subclasses) by name."""
    _RULES.setdefault(cls, {}).update(rules)


def constrain(**rules: Rule) -> Callable[[type], type]:
    """Class decorator: :func:`declare` ``rules`` for the decorated class."""

    def decorate(cls: type) -> type:
        declare(cls, **rules)
        return cls

    return decorate


def validated_by_construction(
    cls: type,
    stand_ins: Callable[[], dict[str, Any]] = dict,
    aliases: Mapping[str, str] | None = None,
) -> None:
    """Declare that building ``cls`` (or a subclass) is cheap and side-effect free, so
    ``check`` runs its own validation by building one from ``stand_ins()`` and the
    config's arguments. ``aliases`` map words of its error messages to argument names
    (torch's "Invalid learning rate" is about ``lr``)."""
    _CONSTRUCTED[cls] = _ByConstruction(stand_ins, dict(aliases or {}))


def rules_of(target: Any) -> dict[str, Rule]:
    """The rules declared for ``target`` and its base classes (the closest wins)."""
    found: dict[str, Rule] = {}
    for base in reversed(getattr(target, "__mro__", ())):
        found.update(_RULES.get(base, {}))
    return found


def _construction(target: Any) -> _ByConstruction | None:
    for base in getattr(target, "__mro__", ()):
        if base in _CONSTRUCTED:
            return _CONSTRUCTED[base]
    return None


def is_declared(target: Any) -> bool:
    """Whether ``target`` declares constraints of its own (rules or construction)."""
    return bool(rules_of(target)) or _construction(target) is not None


# ------------------------------------------------------------------ annotations
_PLAIN = (int, float, bool, str)


def _simple(annotation: Any) -> tuple[Any, ...] | None:
    """The plain types an annotation allows (``int``, ``float | None``...), or None when
    it is anything richer (then nothing is checked)."""
    if annotation in _PLAIN:
        return (annotation,)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        parts = typing.get_args(annotation)
        if all(p in _PLAIN or p is type(None) for p in parts):
            return tuple(parts)
    return None


def _matches(value: Any, allowed: tuple[Any, ...]) -> bool:
    if value is None:
        return type(None) in allowed
    if isinstance(value, bool):
        return bool in allowed
    if _int(value) and (int in allowed or float in allowed):
        return True
    if _real(value) and float in allowed:
        return True
    if str in allowed and isinstance(value, (str, os.PathLike)):
        return True
    return False


def _describe(allowed: tuple[Any, ...]) -> str:
    return " or ".join("None" if t is type(None) else t.__name__ for t in allowed)


def annotation_problems(target: Any, args: Mapping[str, Any]) -> dict[str, str]:
    """Arguments whose constructor annotation is a plain type (``int``, ``float``,
    ``bool``, ``str``, optionally ``| None``) and whose value is not of it.

    Only cadence's own components are judged by their annotations: other packages' are
    hints that their own configs do not always follow (mmdet's ``CachedMixUp`` says
    ``pad_val: float``, its rtmdet configs pass a tuple) and that mmengine never checked.
    """
    if not str(getattr(target, "__module__", "")).startswith("cadence."):
        return {}
    function = getattr(target, "__init__") if isinstance(target, type) else target  # noqa: B009
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # noqa: BLE001 - unresolvable annotations: nothing to check
        return {}
    found = {}
    for name, value in args.items():
        allowed = _simple(hints.get(name))
        if allowed is not None and not isinstance(value, Mapping) and not _matches(value, allowed):
            found[name] = f"must be {_describe(allowed)}, got {value!r}"
    return found


# ------------------------------------------------------------------- violations
def declared_problems(target: Any, args: Mapping[str, Any]) -> dict[str | None, str]:
    """Argument name -> problem, from declared rules (first) and plain annotations."""
    found: dict[str | None, str] = {}
    for name, rule in rules_of(target).items():
        if name in args:
            problem = rule.problem(args[name])
            if problem is not None:
                found[name] = problem
    for name, problem in annotation_problems(target, args).items():
        found.setdefault(name, problem)
    return found


def _blame(target: Any, args: Mapping[str, Any], message: str) -> str | None:
    """The argument an error message is about: one it names (or names by an alias)."""
    spec = _construction(target)
    aliases = spec.aliases if spec is not None else {}
    named = {
        n for n in args if re.search(rf"(?<!\w){re.escape(str(n))}(?!\w)", message, re.IGNORECASE)
    }
    named |= {a for word, a in aliases.items() if a in args and word in message.lower()}
    return named.pop() if len(named) == 1 else None


def _message(exc: BaseException) -> str:
    if isinstance(exc, KeyError) and exc.args:  # str() of a KeyError adds quotes
        return str(exc.args[0])
    return str(exc) or type(exc).__name__


def _construct(target: Any, args: Mapping[str, Any], stand_ins: Mapping[str, Any]) -> str | None:
    try:
        target(**{**stand_ins, **args})
    except (ValueError, TypeError, KeyError, AssertionError) as exc:
        return _message(exc)
    return None


def _binds(target: Any, args: Mapping[str, Any]) -> bool:
    try:
        inspect.signature(target).bind(**args)
    except TypeError:
        return False  # a missing or unknown argument: reported as such, not built
    except ValueError:
        return True  # no signature to read
    return True


def violations(
    target: Any, args: Mapping[str, Any], stand_ins: Mapping[str, Any] | None = None
) -> dict[str | None, str]:
    """What is wrong with ``target(**args)``: argument name (``None``: the component as a
    whole) -> problem. Declared rules and annotations first; when they pass and
    ``target`` is :func:`validated_by_construction`, its own validation."""
    found = declared_problems(target, args)
    spec = _construction(target)
    if found or spec is None:
        return found
    given = {**spec.stand_ins(), **(stand_ins or {})}
    if not _binds(target, {**given, **args}):
        return found
    message = _construct(target, args, given)
    if message is None:
        return found
    name = _blame(target, args, message)
    if name is None:  # an argument whose removal makes it pass is the one at fault
        passing = [n for n in args if _construct(target, {k: v for k, v in args.items()
                                                          if k != n}, given) is None]  # fmt: skip
        name = passing[0] if len(passing) == 1 else None
    found[name] = f"rejected by {_type_name(target)}: {message}"
    return found


def _type_name(target: Any) -> str:
    return getattr(target, "__name__", None) or repr(target)


# ---------------------------------------------------------------- build errors
class ConstraintError(BuildError, ValueError):
    """A config value outside what its component accepts (a ``ValueError`` and, like
    every build error, a ``TypeError``)."""


def _origin_of(source: Any, name: str | None) -> Any:
    attrs = getattr(source, "__dict__", None) or {}
    if name is not None:
        origin = (attrs.get(CHILD_ORIGINS_ATTR) or {}).get(name)
        if origin is not None:
            return origin
    return attrs.get(ORIGIN_ATTR)


def _error(target: Any, found: Mapping[str | None, str], source: Any, key_path: str | None,
           ) -> ConstraintError:  # fmt: skip
    parts = []
    for name, problem in found.items():
        key = f"{key_path}.{name}" if key_path and name else (key_path or name)
        origin = _origin_of(source, name)
        where = f" (set at {origin})" if origin else ""
        parts.append(f"config key '{key}'{where}: {problem}" if key else problem)
    return ConstraintError(
        f"cannot build {_type_name(target)}: {'; '.join(parts)}. `cadence check CONFIG` "
        "reports every such value without building anything."
    )


def raise_if_violated(
    target: Any, args: Mapping[str, Any], source: Any = None, key_path: str | None = None
) -> None:
    """Before building: raise :class:`ConstraintError` when a declared rule or a plain
    annotation of ``target`` (a class with declared constraints) rejects ``args``.
    ``source`` is the config node (for where each value was set)."""
    if not is_declared(target):
        return
    found = declared_problems(target, args)
    if found:
        raise _error(target, found, source, key_path)


def rejected(
    target: Any, args: Mapping[str, Any], exc: BaseException, source: Any = None,
    key_path: str | None = None,
) -> ConstraintError | None:  # fmt: skip
    """After a failed build: ``exc`` (a ``ValueError``/``TypeError`` raised by the
    constructor of a class :func:`validated_by_construction`) as a
    :class:`ConstraintError` naming the argument; ``None`` for any other class."""
    if _construction(target) is None or not isinstance(exc, (ValueError, TypeError, KeyError)):
        return None
    message = _message(exc)
    name = _blame(target, args, message)
    return _error(target, {name: f"rejected by {_type_name(target)}: {message}"}, source, key_path)
