"""The process-wide default registry scope.

A downstream package (``default_scope='mypkg'`` in a config) makes its own child
registries take precedence over cadence's when a config is built. This module is
the single place where that default lives; tests isolate it with
:func:`default_scope`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .errors import RegistryArgumentError

_lock = threading.Lock()
_stack: list[str | None] = []


def get_default_scope() -> str | None:
    """Return the current default scope name, or ``None`` when unset."""
    with _lock:
        return _stack[-1] if _stack else None


def set_default_scope(scope: str | None) -> None:
    """Replace the current default scope for the rest of the process."""
    if scope is not None and not isinstance(scope, str):
        raise TypeError(f"default scope must be a str or None, got {type(scope).__name__}")
    with _lock:
        if _stack:
            _stack[-1] = scope
        else:
            _stack.append(scope)


@contextmanager
def default_scope(scope: str | None) -> Iterator[str | None]:
    """Make ``scope`` the default inside the block; ``None`` keeps the current one."""
    if scope is None:
        yield get_default_scope()
        return
    if not isinstance(scope, str):
        raise TypeError(f"default scope must be a str or None, got {type(scope).__name__}")
    with _lock:
        _stack.append(scope)
        depth = len(_stack)
    try:
        yield scope
    finally:
        with _lock:
            del _stack[depth - 1 :]


class DefaultScope:
    """mmengine-compatible facade over the default scope.

    ``DefaultScope.get_instance(name, scope_name='mypkg')`` sets the default scope
    (as mmengine's Runner does), ``DefaultScope.get_current_instance()`` returns an
    object whose ``scope_name`` is the current default, and
    ``DefaultScope.overwrite_default_scope(scope)`` is a context manager.
    """

    def __init__(self, name: str, scope_name: str) -> None:
        if not isinstance(scope_name, str):
            raise RegistryArgumentError(
                f"scope_name must be a str, got {type(scope_name).__name__}"
            )
        self.instance_name = name
        self._scope_name = scope_name

    @property
    def scope_name(self) -> str:
        return self._scope_name

    @classmethod
    def get_instance(cls, name: str, *, scope_name: str) -> DefaultScope:
        """Set ``scope_name`` as the default scope and return its handle."""
        set_default_scope(scope_name)
        return cls(name, scope_name)

    @classmethod
    def get_current_instance(cls) -> DefaultScope | None:
        """Return a handle on the current default scope, or ``None``."""
        scope = get_default_scope()
        return None if scope is None else cls("current", scope)

    @classmethod
    def check_instance_created(cls, name: str) -> bool:
        """True when some default scope is set (names are not tracked separately)."""
        return get_default_scope() is not None

    @classmethod
    @contextmanager
    def overwrite_default_scope(cls, scope_name: str | None) -> Iterator[None]:
        """Temporarily replace the default scope; ``None`` leaves it unchanged."""
        with default_scope(scope_name):
            yield


@contextmanager
def isolated_default_scope() -> Iterator[None]:
    """Restore the default-scope stack on exit (for tests)."""
    with _lock:
        saved = list(_stack)
    try:
        yield
    finally:
        with _lock:
            _stack[:] = saved
