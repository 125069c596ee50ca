"""Errors raised while loading, merging or overriding configs.

Every error says which file (and line, where known) and which key is at fault.
Subclasses also derive from the builtin error that older code expects
(``KeyError``, ``FileNotFoundError``, ``ImportError``, ``SyntaxError``), so
``except KeyError`` written against mmengine keeps working.
"""

from __future__ import annotations


def where(filename: str | None, line: int | None = None) -> str:
    """Format ``file:line`` (or just the file, or ``''``)."""
    if not filename:
        return ""
    return f"{filename}:{line}" if line else filename


class ConfigError(Exception):
    """A config file or override that cannot be loaded as written."""

    def __init__(
        self,
        message: str,
        *,
        filename: str | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.message = message
        self.filename = filename
        self.line = line
        self.key = key
        super().__init__(message)

    def __str__(self) -> str:
        parts = []
        location = where(self.filename, self.line)
        if location:
            parts.append(location)
        if self.key:
            parts.append(f"key '{self.key}'")
        prefix = ", ".join(parts)
        return f"{prefix}: {self.message}" if prefix else self.message


class ConfigKeyError(ConfigError, KeyError):
    """A key that is missing, duplicated among bases, reserved or badly referenced."""

    def __str__(self) -> str:  # KeyError would add quotes
        return ConfigError.__str__(self)


class ConfigFileNotFoundError(ConfigError, FileNotFoundError):
    """A config or ``_base_`` file that does not exist."""

    def __str__(self) -> str:
        return ConfigError.__str__(self)


class ConfigSyntaxError(ConfigError, SyntaxError):
    """A config file that is not valid Python, JSON or YAML."""

    def __str__(self) -> str:
        return ConfigError.__str__(self)


class ConfigImportError(ConfigError, ImportError):
    """A ``custom_imports`` module that could not be imported."""

    def __str__(self) -> str:
        return ConfigError.__str__(self)


class ConfigTypeError(ConfigError, TypeError):
    """A merge of incompatible values, e.g. a dict over a list without ``_delete_``."""

    def __str__(self) -> str:
        return ConfigError.__str__(self)


class ConfigAssertionError(ConfigError, ValueError, AssertionError):
    """A config value rejected by a check that mmengine makes with ``assert``.

    cadence's message names the key; the error is a ``ValueError`` and also an
    ``AssertionError``, so ``except AssertionError`` written against mmengine still
    catches it.
    """

    def __str__(self) -> str:
        return ConfigError.__str__(self)
