"""Typed attributes that read (and write) an attribute of one of the object's parts:
``message_hub: Forward[MessageHub] = Forward("env.message_hub")``, one line a name.

Each is a :class:`property` whose getter is an :func:`operator.attrgetter`: reading
it runs no Python code (no frame; the hooks read ``runner.message_hub`` and
``runner.optim_wrapper`` on every training step), and takes about what a Python
property does (~100 ns against ~10 ns for a plain attribute).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

T = TypeVar("T")


class Forward(property, Generic[T]):
    """``obj.<name>`` reads ``obj.<path>`` (a dotted path); read-only."""

    def __init__(self, path: str, doc: str | None = None) -> None:
        super().__init__(attrgetter(path), self._setter(path), None, doc or f"``{path}``.")

    def _setter(self, path: str) -> Callable[[Any, Any], None] | None:
        return None

    if TYPE_CHECKING:

        @overload
        def __get__(self, instance: None, owner: type | None = None) -> Forward[T]: ...

        @overload
        def __get__(self, instance: object, owner: type | None = None) -> T: ...

        def __get__(self, instance: object, owner: type | None = None) -> Any: ...


class Settable(Forward[T]):
    """A :class:`Forward` that may be assigned: ``obj.<name> = value`` sets
    ``obj.<path>``, or calls ``setter(part, value)`` with the object the path's last
    name belongs to."""

    def __init__(
        self,
        path: str,
        doc: str | None = None,
        setter: Callable[[Any, Any], None] | None = None,
    ) -> None:
        self._set_with = setter
        super().__init__(path, doc)

    def _setter(self, path: str) -> Callable[[Any, Any], None]:
        owner, _, name = path.rpartition(".")
        part: Callable[[Any], Any] = attrgetter(owner) if owner else (lambda obj: obj)
        setter = self._set_with
        if setter is not None:
            return lambda obj, value: setter(part(obj), value)
        return lambda obj, value: setattr(part(obj), name, value)

    if TYPE_CHECKING:

        def __set__(self, instance: object, value: T) -> None: ...


__all__ = ["Forward", "Settable"]
