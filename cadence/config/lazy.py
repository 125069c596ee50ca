"""Lazy imports for pure-Python configs (``with read_base(): ...`` style).

In such a config, ``from torch.optim import SGD`` binds ``SGD`` to a
:class:`LazyObject`: nothing is imported while the config loads; the object is
imported when the config value is read or built.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..utils.imports import import_object
from .errors import ConfigImportError


class LazyObject:
    """A module or attribute to be imported on first use, named by dotted path."""

    __slots__ = ("_path", "_source")
    _path: str
    _source: str | None

    def __init__(self, path: str, source: str | None = None) -> None:
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_source", source)

    @property
    def dotted_path(self) -> str:
        """The full import path, e.g. ``'torch.optim.SGD'``."""
        return self._path

    def build(self) -> Any:
        """Import and return the real object."""
        try:
            obj = import_object(self._path)
        except ImportError as exc:
            raise ConfigImportError(
                f"cannot import '{self._path}': {exc}", filename=self._source
            ) from exc
        if obj is None:
            raise ConfigImportError(f"cannot import '{self._path}'", filename=self._source)
        return obj

    def __cadence_lazy_build__(self) -> Any:
        return self.build()

    def __getattr__(self, name: str) -> LazyObject:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return LazyObject(f"{self._path}.{name}", self._source)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"lazy import '{self._path}' is read-only")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.build()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<lazy {self._path}>"

    def __eq__(self, other: object) -> bool:
        """Equal to a lazy import of the same path, or to the object it names."""
        if isinstance(other, LazyObject):
            return other._path == self._path
        module = getattr(other, "__module__", None)
        qualname = getattr(other, "__qualname__", None)
        if isinstance(module, str) and isinstance(qualname, str):
            return f"{module}.{qualname}" == self._path
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("LazyObject", self._path))

    def __copy__(self) -> LazyObject:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> LazyObject:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (LazyObject, (self._path, self._source))


def resolve_lazy(value: Any) -> Any:
    """Import ``value`` when it is a :class:`LazyObject`; return others unchanged."""
    return value.build() if type(value) is LazyObject else value


@contextmanager
def read_base() -> Iterator[None]:
    """Mark the block of a pure-Python config that imports its base configs.

    ``Config.fromfile`` rewrites the block before running the file; calling it
    outside a config (e.g. importing the config as a module) does nothing.
    """
    yield
