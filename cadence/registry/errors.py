"""Errors raised when looking up or building registered objects."""

from __future__ import annotations


class RegistryError(KeyError):
    """An unknown or duplicate name in a registry, or a config without ``type``.

    A ``KeyError`` so that code written against mmengine's registry still catches
    it; unlike ``KeyError`` its message is printed without quotes.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class RegistryArgumentError(TypeError, AssertionError):
    """An argument of the wrong type where mmengine checks the type with ``assert``
    (a registry's parent or scope, a runner config): a ``TypeError`` that
    ``except AssertionError`` also catches."""


class BuildError(TypeError):
    """A registered constructor rejected the arguments that a config gave it."""


def describe_location(key_path: str | None, origin: str | None) -> str:
    """Return ``" (config key 'a.b', set at file.py:3)"`` or ``''``."""
    parts = []
    if key_path:
        parts.append(f"config key '{key_path}'")
    if origin:
        parts.append(f"defined at {origin}")
    return f" ({', '.join(parts)})" if parts else ""
