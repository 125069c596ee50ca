"""The one place that holds process-wide named instances.

Message hubs, visualizers and loggers can be fetched by name from anywhere
(``MessageHub.get_instance('exp')``) and one of each family is *current*
(``MessageHub.get_current_instance()``). All of them live in the tables of
this module, so :func:`isolated_instances` can snapshot and restore every
family at once (tests use it to keep instances from leaking between cases). A class
family's table is its own ``_instance_dict`` (as mmengine's ``ManagerMixin`` keeps it):
code that clears or replaces ``MMLogger._instance_dict`` changes the table itself.
"""

from __future__ import annotations

import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, TypeVar

_lock = threading.RLock()
# family (a string such as 'logger') -> {name: instance}, oldest first; a class family
# keeps its table in its own ``_instance_dict`` and is listed in ``_classes``
_instances: dict[Any, dict[str, Any]] = {}
_classes: dict[type, None] = {}
# family -> name of its current instance
_current: dict[Any, str] = {}

T = TypeVar("T", bound="GlobalInstanceMixin")


def _table(family: Any) -> dict[str, Any]:
    """The live table of ``family`` (created when missing)."""
    if isinstance(family, type):
        table = family.__dict__.get("_instance_dict")
        if not isinstance(table, dict):
            table = OrderedDict()
            family._instance_dict = table  # type: ignore[attr-defined]
        _classes[family] = None
        return table
    return _instances.setdefault(family, {})


def own_name(name: str) -> str:
    """``name``; cadence's own default name ``'cadence'`` is ``'mmengine'`` in a process
    whose ``mmengine`` is cadence's alias (what code written for mmengine looks for)."""
    if name == "cadence" and getattr(sys.modules.get("mmengine"), "__cadence_alias__", False):
        return "mmengine"
    return name


def _families() -> list[Any]:
    return [*_instances, *_classes]


def register_instance(family: Any, name: str, instance: Any) -> None:
    """Store ``instance`` under ``name`` in ``family`` and make it current."""
    with _lock:
        table = _table(family)
        table.pop(name, None)
        table[name] = instance
        _current[family] = name


def lookup_instance(family: Any, name: str) -> Any | None:
    """Return the instance named ``name`` in ``family``, or ``None``."""
    return _table(family).get(name)


def instance_names(family: Any) -> list[str]:
    """Names of the instances of ``family``, oldest first."""
    return list(_table(family))


def set_current_instance(family: Any, name: str) -> None:
    """Make the existing instance ``name`` the current one of ``family``."""
    with _lock:
        if name not in _table(family):
            raise KeyError(f"no instance named '{name}' to make current")
        _current[family] = name


def current_instance(family: Any) -> Any | None:
    """Return the current instance of ``family``, or ``None`` if it has none."""
    name = _current.get(family)
    return None if name is None else _table(family).get(name)


@contextmanager
def isolated_instances(start_empty: bool = True) -> Iterator[None]:
    """Run the block with its own instance tables (empty by default); restore them on exit.

    Instances created or made current inside the block are forgotten when it
    ends, and those that existed before are current again.
    """
    with _lock:
        saved = {family: dict(_table(family)) for family in _families()}
        saved_current = dict(_current)
        if start_empty:
            for family in saved:
                _table(family).clear()
            _current.clear()
    try:
        yield
    finally:
        with _lock:
            for family in _families():
                table = _table(family)
                table.clear()
                table.update(saved.get(family, {}))
            _current.clear()
            _current.update(saved_current)


def _check_name(name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise TypeError(f"an instance name must be a non-empty str, got {name!r}")
    return name


class GlobalInstanceMixin:
    """Gives a class named, process-wide instances (mmengine's ``ManagerMixin``).

    Every instance registers itself under its ``name`` when constructed and
    becomes the current one of its class. Each class is its own family, as in
    mmengine: a subclass keeps its own table.
    """

    #: Name used when ``get_current_instance`` finds no instance.
    _default_instance_name: ClassVar[str] = "cadence"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _table(cls)  # its own ``_instance_dict``, from the start

    def __init__(self, name: str) -> None:
        self._instance_name = _check_name(name)
        register_instance(type(self), name, self)

    @property
    def instance_name(self) -> str:
        """The name this instance is registered under."""
        return self._instance_name

    @classmethod
    def get_instance(cls: type[T], name: str, **kwargs: Any) -> T:
        """Return the instance ``name`` (created with ``kwargs`` if missing) and make it current."""
        _check_name(name)
        with _lock:
            existing = lookup_instance(cls, name)
            if existing is None:
                return cls(name=name, **kwargs)
            if kwargs:
                warnings.warn(
                    f"{cls.__name__} '{name}' already exists; get_instance ignores the "
                    f"arguments {sorted(kwargs)}",
                    stacklevel=2,
                )
            set_current_instance(cls, name)
            return existing

    @classmethod
    def get_current_instance(cls: type[T]) -> T:
        """Return the current instance, creating the default-named one if there is none."""
        with _lock:
            instance = current_instance(cls)
            if instance is None:
                instance = cls.get_instance(own_name(cls._default_instance_name))
            return instance

    @classmethod
    def check_instance_created(cls, name: str) -> bool:
        """Whether an instance named ``name`` exists."""
        return lookup_instance(cls, name) is not None
