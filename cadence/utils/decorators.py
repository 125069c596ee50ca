"""Decorators that check prerequisites or rename deprecated arguments."""

from __future__ import annotations

import functools
import importlib.util
import inspect
import re
import shutil
import textwrap
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class ConflictingArgumentsError(TypeError, AssertionError):
    """A deprecated argument and its replacement were both given (mmengine asserted)."""


_DEFAULT_TMPL = (
    'Prerequisites "{}" are required in method "{}" but not found, please install them first.'
)


def check_prerequisites(
    prerequisites: str | list[str], checker: Callable[[str], bool], msg_tmpl: str = _DEFAULT_TMPL
) -> Callable[[F], F]:
    """Decorator factory: calling the function raises ``RuntimeError`` if a prerequisite is missing.

    ``checker(item)`` says whether one prerequisite is met; the message names the
    missing ones and the function (``msg_tmpl.format(missing, func_name)``).
    """
    items = [prerequisites] if isinstance(prerequisites, str) else list(prerequisites)

    def wrap(func: F) -> F:
        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            missing = [item for item in items if not checker(item)]
            if missing:
                message = msg_tmpl.format(", ".join(missing), func.__name__)
                print(message)  # mmengine prints it too (scripts show it without a traceback)
                raise RuntimeError(message)
            return func(*args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return wrap


def _package_found(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def _executable_found(name: str) -> bool:
    return shutil.which(name) is not None


def requires_package(prerequisites: str | list[str]) -> Callable[[F], F]:
    """Decorator: calls raise ``RuntimeError`` unless these Python packages are importable."""
    return check_prerequisites(prerequisites, checker=_package_found)


def requires_executable(prerequisites: str | list[str]) -> Callable[[F], F]:
    """Decorator: the function raises ``RuntimeError`` unless these executables are on ``PATH``."""
    return check_prerequisites(prerequisites, checker=_executable_found)


def deprecated_api_warning(
    name_dict: dict[str, str], cls_name: str | None = None
) -> Callable[[F], F]:
    """Decorator: accept old argument names (keys of ``name_dict``) with a ``DeprecationWarning``.

    Keyword arguments under an old name are passed on under the new one; giving
    both names at once raises :class:`ConflictingArgumentsError` (a ``TypeError``).
    Positional arguments are passed on
    as they are (only the warning is given).
    """

    def wrap(func: F) -> F:
        qualname = f"{cls_name}.{func.__name__}" if cls_name else func.__name__
        try:
            positional = [p.name for p in inspect.signature(func).parameters.values()]
        except (TypeError, ValueError):
            positional = []

        def _warn(old: str, new: str) -> None:
            warnings.warn(
                f'"{old}" is deprecated in `{qualname}`, please use "{new}" instead',
                DeprecationWarning,
                stacklevel=3,
            )

        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            for old, new in name_dict.items():
                if old in positional[: len(args)]:
                    _warn(old, new)
                if old in kwargs:
                    if new in kwargs:
                        raise ConflictingArgumentsError(
                            f"`{qualname}` got both the deprecated argument "
                            f"'{old}' and its replacement '{new}'"
                        )
                    _warn(old, new)
                    kwargs[new] = kwargs.pop(old)
            return func(*args, **kwargs)

        return wrapped  # type: ignore[return-value]

    return wrap


def deprecated_function(since: str, removed_in: str, instructions: str) -> Callable[[F], F]:
    """Decorator: calling the function warns ``DeprecationWarning`` naming both versions."""

    def wrap(func: F) -> F:
        message = (
            f"'{func.__module__}.{func.__name__}' is deprecated in version {since} and "
            f"will be removed in version {removed_in}. Please {instructions}."
        )

        @functools.wraps(func)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return func(*args, **kwargs)

        doc = func.__doc__ or ""
        wrapped.__doc__ = _deprecation_docstring(doc, since, removed_in, instructions)
        return wrapped  # type: ignore[return-value]

    return wrap


def _deprecation_docstring(doc: str, since: str, removed_in: str, instructions: str) -> str:
    """``doc`` under a ``.. deprecated::`` note, laid out as mmengine lays it out.

    The summary (up to the first blank line) is dedented line by line, the body as a
    block; both are then indented by four spaces below the note.
    """
    note = (
        f".. deprecated:: {since}\n    Deprecated and will be removed in version {removed_in}.\n"
        f"    Please {instructions}.\n"
    )
    summary, *rest = re.split("\n\n", doc, maxsplit=1)
    summary = textwrap.indent("\n".join(textwrap.dedent(line) for line in summary.split("\n")),
                              "    ")  # fmt: skip
    parts = [note, "\n\n", summary]
    if rest:
        parts += ["\n\n", textwrap.indent(textwrap.dedent(rest[0]), "    ")]
    return "".join(parts)
