"""``KEY=KIND:ARGS`` search-space specs of ``cadence sweep --param``.

``loguniform:LOW:HIGH`` and ``uniform:LOW:HIGH`` sample a float, ``int:LOW:HIGH``
an integer (both ends included), ``choice:A,B,C`` one of the listed values (each
read as ``--cfg-options`` reads a scalar: ``16`` is an int, ``true`` a bool).
Optuna is imported only when a value is sampled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import SweepError

#: every kind, as the error messages show it
KINDS = ("loguniform:LOW:HIGH", "uniform:LOW:HIGH", "int:LOW:HIGH", "choice:A,B,...")


@dataclass(frozen=True)
class ParamSpec:
    """One swept config key: ``key`` (a dotted path), ``kind`` and its arguments."""

    key: str
    kind: str
    low: float = 0.0
    high: float = 0.0
    choices: tuple[Any, ...] = ()

    def suggest(self, trial: Any) -> Any:
        """Sample this parameter's value for an Optuna ``trial``."""
        if self.kind == "choice":
            return trial.suggest_categorical(self.key, list(self.choices))
        if self.kind == "int":
            return trial.suggest_int(self.key, int(self.low), int(self.high))
        return trial.suggest_float(self.key, self.low, self.high, log=self.kind == "loguniform")

    def describe(self) -> str:
        """The spec as written on the command line (``kind:args``)."""
        if self.kind == "choice":
            return "choice:" + ",".join(str(c) for c in self.choices)
        if self.kind == "int":
            return f"int:{int(self.low)}:{int(self.high)}"
        return f"{self.kind}:{self.low:g}:{self.high:g}"


def _bad(text: str, why: str) -> SweepError:
    return SweepError(f"--param {text!r}: {why}; valid kinds: {', '.join(KINDS)}")


def _number(text: str, word: str, whole: str, integer: bool) -> float:
    try:
        return float(int(word)) if integer else float(word)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise _bad(whole, f"{word!r} is not {kind}") from None


def parse_param(text: str) -> ParamSpec:
    """Parse ``'optim_wrapper.optimizer.lr=loguniform:1e-4:1e-1'`` into a :class:`ParamSpec`.

    Raises :class:`SweepError` naming the spec and the valid kinds when it is malformed.
    """
    key, sep, spec = text.partition("=")
    key = key.strip()
    if not sep or not key or "" in key.split("."):
        example = "optim_wrapper.optimizer.lr=loguniform:1e-4:1e-1"
        raise _bad(text, f"expected KEY=KIND:ARGS, e.g. {example}")
    kind, colon, args = spec.partition(":")
    if kind == "choice":
        from ..config.dict_action import parse_scalar

        words = [w.strip() for w in args.split(",")] if colon else []
        if not words or any(w == "" for w in words):
            raise _bad(text, "choice needs values separated by commas (choice:A,B,C)")
        choices = tuple(parse_scalar(w) for w in words)
        if len(set(map(repr, choices))) != len(choices):
            raise _bad(text, "choice lists a value twice")
        return ParamSpec(key, kind, choices=choices)
    if kind not in ("loguniform", "uniform", "int"):
        raise _bad(text, f"unknown kind {kind!r}")
    bounds = args.split(":") if colon else []
    if len(bounds) != 2:
        raise _bad(text, f"{kind} needs two bounds ({kind}:LOW:HIGH)")
    low, high = (_number(b.strip(), b.strip(), text, kind == "int") for b in bounds)
    if not low < high:
        raise _bad(text, f"LOW must be smaller than HIGH, got {bounds[0]} and {bounds[1]}")
    if kind == "loguniform" and low <= 0:
        raise _bad(text, f"loguniform needs LOW > 0, got {bounds[0]}")
    return ParamSpec(key, kind, low=low, high=high)


def parse_params(items: Sequence[str | ParamSpec]) -> list[ParamSpec]:
    """Parse every ``--param`` (specs pass through); a key given twice, or none at all,
    is an error."""
    specs = [item if isinstance(item, ParamSpec) else parse_param(item) for item in items]
    if not specs:
        raise SweepError(
            "give at least one --param KEY=KIND:ARGS to sweep; valid kinds: " + ", ".join(KINDS)
        )
    seen: set[str] = set()
    for spec in specs:
        if spec.key in seen:
            raise SweepError(f"--param {spec.key!r} is given twice")
        seen.add(spec.key)
    return specs


def check_keys(specs: Sequence[ParamSpec], cfg: Any) -> None:
    """Every swept key must already exist in the config (a typo would otherwise add a
    key that nothing reads, and every trial would train the same model)."""
    for spec in specs:
        node: Any = cfg
        for depth, part in enumerate(spec.key.split(".")):
            if isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif hasattr(node, "keys") and part in node:
                node = node[part]
            else:
                where = ".".join(spec.key.split(".")[:depth]) or "the top level"
                names = sorted(node.keys()) if hasattr(node, "keys") else []
                hint = f"; keys there: {', '.join(map(str, names))}" if names else ""
                raise SweepError(
                    f"--param {spec.key}: the config has no key '{part}' under {where}{hint}"
                )
