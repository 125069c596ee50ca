"""Type checks, casts and small structural helpers (mmengine.utils.misc counterparts)."""

from __future__ import annotations

import itertools
from collections import abc
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, cast

# mmengine.utils.misc also holds its decorators and import helpers; cadence keeps them in
# their own modules and names them here too, so ``from mmengine.utils.misc import ...`` works.
from .decorators import (
    deprecated_api_warning,
    deprecated_function,
    requires_executable,
    requires_package,
)
from .imports import get_object_from_string, import_modules_from_strings

__all__ = [
    "apply_to", "concat_list", "deprecated_api_warning", "deprecated_function",
    "get_object_from_string", "has_method", "import_modules_from_strings", "is_list_of",
    "is_method_overridden", "NotAClassError", "is_seq_of", "is_str", "is_tuple_of",
    "iter_cast", "list_cast", "requires_executable", "requires_package", "slice_list",
    "to_1tuple", "to_2tuple", "to_3tuple", "to_4tuple", "to_ntuple", "tuple_cast",
]  # fmt: skip


def is_str(x: Any) -> bool:
    """Whether ``x`` is a ``str``."""
    return isinstance(x, str)


def iter_cast(inputs: Iterable[Any], dst_type: type, return_type: type | None = None) -> Any:
    """Cast every element of ``inputs`` to ``dst_type``; an iterator, or ``return_type(...)``."""
    if not isinstance(inputs, abc.Iterable):
        raise TypeError(f"inputs must be an iterable object, got {type(inputs).__name__}")
    if not isinstance(dst_type, type):
        raise TypeError(f"dst_type must be a type, got {dst_type!r}")
    cast: Iterator[Any] = map(dst_type, inputs)
    return cast if return_type is None else return_type(cast)


def list_cast(inputs: Iterable[Any], dst_type: type) -> list[Any]:
    """``iter_cast`` into a list."""
    return iter_cast(inputs, dst_type, return_type=list)


def tuple_cast(inputs: Iterable[Any], dst_type: type) -> tuple[Any, ...]:
    """``iter_cast`` into a tuple."""
    return iter_cast(inputs, dst_type, return_type=tuple)


def is_seq_of(
    seq: Any, expected_type: type | tuple[type, ...], seq_type: type | None = None
) -> bool:
    """Whether ``seq`` is a sequence (of ``seq_type`` if given) of ``expected_type`` items."""
    if seq_type is not None and not isinstance(seq_type, type):
        raise TypeError(f"seq_type must be a type, got {seq_type!r}")
    if not isinstance(seq, seq_type or abc.Sequence):
        return False
    return all(isinstance(item, expected_type) for item in cast(Iterable[Any], seq))


def is_list_of(seq: Any, expected_type: type | tuple[type, ...]) -> bool:
    """Whether ``seq`` is a list whose items are ``expected_type``."""
    return is_seq_of(seq, expected_type, seq_type=list)


def is_tuple_of(seq: Any, expected_type: type | tuple[type, ...]) -> bool:
    """Whether ``seq`` is a tuple whose items are ``expected_type``."""
    return is_seq_of(seq, expected_type, seq_type=tuple)


def slice_list(in_list: Sequence[Any], lens: int | list[int]) -> list[Any]:
    """Cut ``in_list`` into consecutive pieces of the given lengths (or all of length ``lens``)."""
    if isinstance(lens, int):
        if lens <= 0 or len(in_list) % lens:
            raise ValueError(f"cannot cut a list of {len(in_list)} into pieces of {lens}")
        lens = [lens] * (len(in_list) // lens)
    if not isinstance(lens, list):
        raise TypeError(f"lens must be an int or a list of ints, got {type(lens).__name__}")
    if sum(lens) != len(in_list):
        raise ValueError(f"sum of lens and list length do not match: {sum(lens)} != {len(in_list)}")
    pieces, start = [], 0
    for n in lens:
        pieces.append(in_list[start : start + n])
        start += n
    return pieces


def concat_list(in_list: Iterable[Iterable[Any]]) -> list[Any]:
    """Flatten one level: a list of lists into one list."""
    return list(itertools.chain.from_iterable(in_list))


def to_ntuple(n: int) -> Callable[[Any], Any]:
    """A function that repeats a non-iterable value ``n`` times; iterables pass unchanged."""

    def parse(x: Any) -> Any:
        if isinstance(x, abc.Iterable):
            return x
        return tuple(itertools.repeat(x, n))

    return parse


to_1tuple = to_ntuple(1)
to_2tuple = to_ntuple(2)
to_3tuple = to_ntuple(3)
to_4tuple = to_ntuple(4)


def apply_to(data: Any, expr: Callable[[Any], bool], apply_func: Callable[[Any], Any]) -> Any:
    """Apply ``apply_func`` to every leaf of dicts/lists/tuples for which ``expr`` is true.

    Containers keep their type (dict subclasses and namedtuples included).
    """
    if isinstance(data, dict):
        out = type(data)()
        for key, value in data.items():
            out[key] = apply_to(value, expr, apply_func)
        return out
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(apply_to(item, expr, apply_func) for item in data))
    if isinstance(data, list | tuple):
        return type(data)(apply_to(item, expr, apply_func) for item in data)
    return apply_func(data) if expr(data) else data


def has_method(obj: object, method: str) -> bool:
    """Whether ``obj`` has a callable attribute ``method``."""
    return callable(getattr(obj, method, None))


class NotAClassError(TypeError, AssertionError):
    """An instance where a class was expected (mmengine asserted, hence both bases)."""


def is_method_overridden(method: str, base_class: type, derived_class: Any) -> bool:
    """Whether ``derived_class`` (a class or an instance) overrides ``base_class.method``."""
    if not isinstance(base_class, type):
        raise NotAClassError(
            f"base_class must be a class, got an instance of {type(base_class).__name__}"
        )
    if not isinstance(derived_class, type):
        derived_class = type(derived_class)
    return bool(getattr(derived_class, method) != getattr(base_class, method))
