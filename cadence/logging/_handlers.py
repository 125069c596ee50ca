"""Handlers and formatting of cadence's loggers (the OpenMMLab layout).

Console lines read ``time - name - LEVEL - message`` (errors also name the code
location); only the console colors level names, and only on a terminal. Each
handler drops repeated WARNING messages. A logger keeps at most one console and
one file handler, found again by their role when it is reconfigured.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

from ..utils.suggest import did_you_mean
from .progress import is_terminal

_ROLE_ATTR = "_cadence_role"
_LEVEL_COLORS = {"WARNING": 33, "ERROR": 31, "CRITICAL": 31}  # ANSI yellow, red
_LEVEL_NAMES = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET")


def _console_has_colors() -> bool:
    """Colors only on a terminal (decided per message: the console follows ``sys.stdout``).

    ``NO_COLOR`` turns them off and ``FORCE_COLOR`` on (https://no-color.org).
    """
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return is_terminal(sys.stdout)


class _Formatter(logging.Formatter):
    """``time - name - LEVEL - message``; errors also name the code location."""

    def __init__(self, color: bool, datefmt: str) -> None:
        super().__init__(datefmt=datefmt)
        self._color = color

    def _level(self, name: str) -> str:
        color = _LEVEL_COLORS.get(name)
        if color is None or not self._color or not _console_has_colors():
            return name
        return f"\x1b[4m\x1b[{color}m{name}\x1b[0m"  # underlined, colored

    def format(self, record: logging.LogRecord) -> str:
        record.message = record.getMessage()
        where = ""
        if record.levelno >= logging.ERROR:
            where = f"{record.pathname} - {record.funcName} - {record.lineno} - "
        text = (
            f"{self.formatTime(record, self.datefmt)} - {record.name} - "
            f"{self._level(record.levelname)} - {where}{record.message}"
        )
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            text += "\n" + self.formatStack(record.stack_info)
        return text


class _DropRepeatedWarnings(logging.Filter):
    """Lets each distinct WARNING message through once."""

    def __init__(self) -> None:
        super().__init__()
        self._seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno != logging.WARNING:
            return True
        key = str(record.msg)
        if key in self._seen:
            return False
        self._seen.add(key)
        return True


class _ConsoleHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stdout`` is at the time of each message."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self) -> Any:
        return sys.stdout

    @stream.setter
    def stream(self, value: Any) -> None:  # StreamHandler assigns it; we always follow stdout
        pass


def to_level(level: int | str) -> int:
    """``level`` as a number: an int, or a level name such as ``INFO``."""
    if isinstance(level, int) and not isinstance(level, bool):
        return level
    if isinstance(level, str) and level.upper() in _LEVEL_NAMES:
        return logging.getLevelName(level.upper())
    raise ValueError(
        f"log_level must be an int or one of {', '.join(_LEVEL_NAMES)}, got {level!r}."
        f"{did_you_mean(str(level).upper(), _LEVEL_NAMES)}"
    )


def rank_log_file(log_file: str | os.PathLike[str], rank: int) -> str:
    """The file of rank ``rank``: ``log_file`` for rank 0, else ``<stem>_rank<r><ext>``."""
    path = os.fspath(log_file)
    if rank == 0:
        return path
    stem, ext = os.path.splitext(path)
    return f"{stem}_rank{rank}{ext}"


def find_handler(logger: logging.Logger, role: str) -> logging.Handler | None:
    """The handler of ``logger`` configured here for ``role`` (``'console'``/``'file'``)."""
    for handler in logger.handlers:
        if getattr(handler, _ROLE_ATTR, None) == role:
            return handler
    return None


def configure_console(logger: logging.Logger, level: int) -> None:
    """Give ``logger`` its console handler (once) at ``level``."""
    handler = find_handler(logger, "console")
    if handler is None:
        handler = _ConsoleHandler()
        handler.setFormatter(_Formatter(color=True, datefmt="%m/%d %H:%M:%S"))
        handler.addFilter(_DropRepeatedWarnings())
        setattr(handler, _ROLE_ATTR, "console")
        logger.addHandler(handler)
    handler.setLevel(level)


def _file_handler(path: str, file_mode: str, cfg: Mapping[str, Any] | None) -> logging.Handler:
    """A ``logging.FileHandler``, or the handler ``cfg`` names (mmengine's ``file_handler_cfg``:
    ``dict(type='RotatingFileHandler', maxBytes=...)``, a class of ``logging.handlers``)."""
    if cfg is None:
        return logging.FileHandler(path, mode=file_mode, encoding="utf-8")
    from importlib import import_module

    handlers = import_module("logging.handlers")  # only for a configured handler class

    options = dict(cfg)
    kind = options.pop("type", None)
    names = sorted(n for n in dir(handlers) if n.endswith("FileHandler")) + ["FileHandler"]
    if kind not in names:
        raise ValueError(
            f"file_handler_cfg['type'] must name a file handler of logging.handlers "
            f"({', '.join(names)}), got {kind!r}.{did_you_mean(str(kind), names)}"
        )
    handler_cls = getattr(handlers, kind, None) or logging.FileHandler
    options.setdefault("filename", path)
    options.setdefault("encoding", "utf-8")
    handler: logging.Handler = handler_cls(**options)
    return handler


def configure_file(
    logger: logging.Logger,
    path: str,
    level: int,
    file_mode: str,
    handler_cfg: Mapping[str, Any] | None = None,
) -> None:
    """Make ``logger`` write to ``path`` at ``level``: a handler for another path is replaced."""
    handler = find_handler(logger, "file")
    wanted = os.path.abspath(path)
    if handler is not None and getattr(handler, "baseFilename", None) != wanted:
        logger.removeHandler(handler)
        handler.close()
        handler = None
    if handler is None:
        os.makedirs(os.path.dirname(wanted) or ".", exist_ok=True)
        handler = _file_handler(wanted, file_mode, handler_cfg)
        handler.setFormatter(_Formatter(color=False, datefmt="%Y/%m/%d %H:%M:%S"))
        handler.addFilter(_DropRepeatedWarnings())
        setattr(handler, _ROLE_ATTR, "file")
        logger.addHandler(handler)
    handler.setLevel(level)
