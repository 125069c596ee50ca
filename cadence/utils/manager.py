"""Classes with named, process-wide instances (mmengine's ``ManagerMixin``/``ManagerMeta``).

Each class that uses :class:`ManagerMixin` keeps its own ``_instance_dict``
(name -> instance, oldest first). ``get_instance(name)`` creates the instance
on first use; ``get_current_instance()`` returns the most recently created one.
cadence's own message hub, visualizer and logger use the richer
``cadence.logging.GlobalInstanceMixin``; this is the mixin for user classes.
"""

from __future__ import annotations

import inspect
import threading
import warnings
from collections import OrderedDict
from typing import Any, TypeVar

_lock = threading.RLock()

T = TypeVar("T", bound="ManagerMixin")


class ManagerError(TypeError, AssertionError):
    """A managed class without a ``name`` argument, or a name that is not a str."""


class ManagerMeta(type):
    """Metaclass giving each class its own ``_instance_dict``; ``__init__`` must take ``name``."""

    _instance_dict: OrderedDict[str, Any]

    def __init__(cls, *args: Any) -> None:
        cls._instance_dict = OrderedDict()
        params = inspect.signature(cls.__init__).parameters  # type: ignore[misc]
        if "name" not in params:
            raise ManagerError(f"{cls} must have the `name` argument")
        super().__init__(*args)


class ManagerMixin(metaclass=ManagerMeta):
    """Base for classes whose instances are fetched by name from anywhere.

    Subclasses accept ``name`` in ``__init__`` and pass it on with ``super().__init__(name)``.
    """

    def __init__(self, name: str = "", **kwargs: Any) -> None:
        self._instance_name = name

    @classmethod
    def get_instance(cls: type[T], name: str, **kwargs: Any) -> T:
        """Return the instance ``name``, creating it with ``kwargs`` when it does not exist yet."""
        if not isinstance(name, str):
            raise ManagerError(f"type of name should be str, but got {type(name).__name__}")
        with _lock:
            instances = cls._instance_dict
            if name not in instances:
                instances[name] = cls(name=name, **kwargs)
            elif kwargs:
                warnings.warn(f"{cls.__name__} instance '{name}' already exists; "
                              f"get_instance ignores {sorted(kwargs)}", stacklevel=2)  # fmt: skip
            return instances[name]

    @classmethod
    def get_current_instance(cls: type[T]) -> T:
        """The most recently created instance; ``RuntimeError`` if there is none yet."""
        with _lock:
            instances = cls._instance_dict
            if not instances:
                raise RuntimeError(f"Before calling {cls.__name__}.get_current_instance(), you "
                                   "should call get_instance(name=xxx) at least once.")  # fmt: skip
            return instances[next(reversed(instances))]

    @classmethod
    def check_instance_created(cls, name: str) -> bool:
        """Whether an instance named ``name`` exists."""
        return name in cls._instance_dict

    @property
    def instance_name(self) -> str:
        """The name this instance was created with."""
        return self._instance_name
