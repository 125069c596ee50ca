"""Random decisions a transform can repeat: ``cache_randomness`` and ``cache_random_params``.

A method decorated with :class:`cache_randomness` returns a fresh random value on
each call, except inside :func:`cache_random_params`, where its first value is kept
and returned again; so the same random crop or flip can be applied to several
images (``TransformBroadcaster(share_random_params=True)``).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from .base import BaseTransform

_T = TypeVar("_T", bound=type)


class cache_randomness:  # noqa: N801 (mmcv's name, used as a decorator)
    """Mark an instance method whose return value is random (cached inside
    :func:`cache_random_params`).

    The class gets a ``_methods_with_randomness`` list naming its decorated methods.
    """

    def __init__(self, func: Callable[..., Any]) -> None:
        if not inspect.isfunction(func):
            raise TypeError(f"@cache_randomness decorates functions, got {func!r}")
        params = list(inspect.signature(func).parameters)
        if not params or params[0] != "self":
            raise TypeError(
                f"@cache_randomness decorates instance methods (first argument 'self'); "
                f"{func.__qualname__} takes {params}"
            )
        self.__doc__ = func.__doc__
        self.__name__ = func.__name__
        self.__qualname__ = func.__qualname__
        self.__wrapped__ = func
        self.func = func
        self.name = func.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        inherited = list(getattr(owner, "_methods_with_randomness", []))
        if "_methods_with_randomness" not in owner.__dict__:
            owner._methods_with_randomness = inherited  # type: ignore[attr-defined]
        if name not in owner._methods_with_randomness:  # type: ignore[attr-defined]
            owner._methods_with_randomness.append(name)  # type: ignore[attr-defined]

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return functools.partial(self._call, obj)

    def _call(self, obj: Any, *args: Any, **kwargs: Any) -> Any:
        if not getattr(obj, "_cache_enabled", False):
            obj.__dict__.pop("_cache", None)
            return self.func(obj, *args, **kwargs)
        calls = obj.__dict__.setdefault("_cache_calls", {})
        calls[self.name] = calls.get(self.name, 0) + 1
        cache = obj.__dict__.setdefault("_cache", {})
        if self.name not in cache:
            cache[self.name] = self.func(obj, *args, **kwargs)
        return cache[self.name]


def avoid_cache_randomness(cls: _T) -> _T:
    """Class decorator: instances refuse :func:`cache_random_params` (RuntimeError).

    For transforms whose randomness cannot be put in a cached method. Not inherited.
    """
    if not (isinstance(cls, type) and issubclass(cls, BaseTransform)):
        raise TypeError(f"@avoid_cache_randomness decorates BaseTransform subclasses, got {cls}")
    if getattr(cls, "_methods_with_randomness", None):
        raise RuntimeError(
            f"{cls.__name__} is decorated with @avoid_cache_randomness but has methods "
            f"decorated with @cache_randomness: {cls._methods_with_randomness}"  # type: ignore[attr-defined]
        )
    cls._avoid_cache_randomness_of = cls  # type: ignore[attr-defined]
    return cls


def _refuses_cache(transform: Any) -> bool:
    return getattr(transform, "_avoid_cache_randomness_of", None) is type(transform)


def _walk(transforms: Any) -> Iterator[BaseTransform]:
    """Every ``BaseTransform`` in ``transforms``, wrappers' inner ones included."""
    if isinstance(transforms, BaseTransform):
        yield transforms
    if isinstance(transforms, Iterable) and not isinstance(transforms, (str, bytes, dict)):
        for inner in transforms:
            yield from _walk(inner)


def _checked_transform(transform: BaseTransform) -> Callable[[Any], Any]:
    """``transform.transform`` that fails if a cached method ran twice for one sample."""
    method = transform.transform

    @functools.wraps(method)
    def checked(results: Any) -> Any:
        transform.__dict__["_cache_calls"] = {}
        output = method(results)
        for name, count in transform.__dict__.get("_cache_calls", {}).items():
            if count > 1:
                raise RuntimeError(
                    f"{type(transform).__name__}.{name} (@cache_randomness) was called "
                    f"{count} times for one sample; call it at most once per sample"
                )
        return output

    return checked


@contextmanager
def cache_random_params(transforms: BaseTransform | Iterable[Any]) -> Iterator[None]:
    """Within the block, each ``@cache_randomness`` method of ``transforms`` returns its
    first value again, so every sample gets the same random parameters."""
    started: list[BaseTransform] = []
    try:
        for transform in _walk(transforms):
            if _refuses_cache(transform):
                raise RuntimeError(
                    f"{type(transform).__name__} is decorated with @avoid_cache_randomness "
                    "and cannot share random parameters (cache_random_params, e.g. "
                    "TransformBroadcaster(share_random_params=True))"
                )
            if not getattr(transform, "_methods_with_randomness", None):
                continue
            transform.__dict__["_cache_enabled"] = True
            transform.__dict__["transform"] = _checked_transform(transform)
            started.append(transform)
        yield
    finally:
        for transform in started:
            for key in ("_cache_enabled", "_cache", "_cache_calls", "transform"):
                transform.__dict__.pop(key, None)
