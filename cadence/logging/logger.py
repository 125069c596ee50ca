"""Loggers built on the standard ``logging`` module, configured the OpenMMLab way.

``get_logger`` gives a ``logging.Logger`` with a console handler (only rank 0
shows messages below ERROR) and optionally a file handler; calling it again
reconfigures the same handlers instead of adding more. The most recently
configured logger is the *current* one that ``print_log(..., logger='current')``
writes to.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from ..utils.suggest import did_you_mean
from ._rank import process_rank
from .instances import current_instance, instance_names, lookup_instance, register_instance
from .progress import is_terminal

_FAMILY = "logger"
_ROLE_ATTR = "_cadence_role"
_LEVEL_COLORS = {"WARNING": 33, "ERROR": 31, "CRITICAL": 31}  # ANSI yellow, red
_LEVEL_NAMES = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET")

LoggerLike = logging.Logger | str | None


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


def _to_level(level: int | str) -> int:
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


def _handler(logger: logging.Logger, role: str) -> logging.Handler | None:
    for handler in logger.handlers:
        if getattr(handler, _ROLE_ATTR, None) == role:
            return handler
    return None


def _configure_console(logger: logging.Logger, level: int) -> None:
    handler = _handler(logger, "console")
    if handler is None:
        handler = _ConsoleHandler()
        handler.setFormatter(_Formatter(color=True, datefmt="%m/%d %H:%M:%S"))
        handler.addFilter(_DropRepeatedWarnings())
        setattr(handler, _ROLE_ATTR, "console")
        logger.addHandler(handler)
    handler.setLevel(level)


def _configure_file(logger: logging.Logger, path: str, level: int, file_mode: str) -> None:
    handler = _handler(logger, "file")
    wanted = os.path.abspath(path)
    if handler is not None and getattr(handler, "baseFilename", None) != wanted:
        logger.removeHandler(handler)
        handler.close()
        handler = None
    if handler is None:
        os.makedirs(os.path.dirname(wanted) or ".", exist_ok=True)
        handler = logging.FileHandler(wanted, mode=file_mode, encoding="utf-8")
        handler.setFormatter(_Formatter(color=False, datefmt="%Y/%m/%d %H:%M:%S"))
        handler.addFilter(_DropRepeatedWarnings())
        setattr(handler, _ROLE_ATTR, "file")
        logger.addHandler(handler)
    handler.setLevel(level)


def get_logger(
    name: str = "cadence",
    log_file: str | os.PathLike[str] | None = None,
    log_level: int | str = "INFO",
    distributed_rank: int | None = None,
    *,
    file_mode: str = "w",
    rank_files: bool = False,
    all_ranks_console: bool = False,
) -> logging.Logger:
    """Configure and return the logger ``name``; it becomes the current logger.

    Args:
        name: the ``logging`` logger name.
        log_file: also write to this file. Rank 0 writes to it; other ranks
            write ``<stem>_rank<r><ext>`` beside it when ``rank_files`` is set
            or the level is DEBUG, and nothing otherwise.
        log_level: level of the logger and its handlers.
        distributed_rank: this process's rank; by default torch.distributed's
            rank when initialised, else ``$RANK``, else 0.
        file_mode: mode the log file is opened with ('w' or 'a').
        rank_files: let ranks other than 0 write their own log file.
        all_ranks_console: let ranks other than 0 print below ERROR level too.

    Calling it again for the same name reconfigures the existing handlers
    (levels; the file handler is replaced only when the path changes and kept
    when ``log_file`` is None), so handlers never pile up.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"logger name must be a non-empty str, got {name!r}")
    level = _to_level(log_level)
    rank = process_rank() if distributed_rank is None else int(distributed_rank)
    logger = logging.getLogger(name)
    logger.setLevel(level)
    logger.propagate = False
    console_level = level if rank == 0 or all_ranks_console else max(level, logging.ERROR)
    _configure_console(logger, console_level)
    if log_file is not None and (rank == 0 or rank_files or level <= logging.DEBUG):
        _configure_file(logger, rank_log_file(log_file, rank), level, file_mode)
    register_instance(_FAMILY, name, logger)
    return logger


def get_current_logger() -> logging.Logger:
    """The logger configured last by :func:`get_logger` (a default 'cadence' one if none)."""
    logger = current_instance(_FAMILY)
    return logger if logger is not None else get_logger()


def log_file_of(logger: logging.Logger) -> str | None:
    """The path of the file ``logger`` writes to through :func:`get_logger`, if any."""
    handler = _handler(logger, "file")
    return getattr(handler, "baseFilename", None)


def print_log(msg: Any, logger: LoggerLike = None, level: int = logging.INFO) -> None:
    """Log ``msg`` to ``logger``.

    ``logger`` may be a ``logging.Logger``; ``None`` (plain ``print``);
    ``'silent'`` (drop it); ``'current'`` (the current logger); or the name
    of a logger created with :func:`get_logger` or the ``logging`` module.
    """
    if logger is None:
        print(msg)
    elif isinstance(logger, logging.Logger):
        logger.log(level, msg)
    elif logger == "silent":
        return
    elif logger == "current":
        get_current_logger().log(level, msg)
    elif isinstance(logger, str):
        found = lookup_instance(_FAMILY, logger)
        if found is None and logger in logging.Logger.manager.loggerDict:
            found = logging.getLogger(logger)
        if found is None:
            raise ValueError(
                f"no logger named '{logger}' has been created (use get_logger first, or "
                f"logger='current'/'silent'/None).{did_you_mean(logger, instance_names(_FAMILY))}"
            )
        found.log(level, msg)
    else:
        raise TypeError(
            "logger must be a logging.Logger, a logger name, 'current', 'silent' or None, "
            f"got {type(logger).__name__}"
        )


class MMLogger:
    """mmengine's ``MMLogger`` entry points, returning standard loggers from :func:`get_logger`."""

    @staticmethod
    def get_instance(
        name: str,
        logger_name: str | None = None,
        log_file: str | None = None,
        log_level: int | str = "INFO",
        file_mode: str = "w",
        distributed: bool = False,
    ) -> logging.Logger:
        """The logger ``name``, configured as ``MMLogger.get_instance`` does (no logger_name)."""
        existing = lookup_instance(_FAMILY, name)
        if existing is not None and log_file is None:
            register_instance(_FAMILY, name, existing)
            return existing
        return get_logger(name, log_file, log_level, file_mode=file_mode, rank_files=distributed)

    @staticmethod
    def get_current_instance() -> logging.Logger:
        """The current logger."""
        return get_current_logger()

    @staticmethod
    def check_instance_created(name: str) -> bool:
        """Whether :func:`get_logger` has configured a logger named ``name``."""
        return lookup_instance(_FAMILY, name) is not None
