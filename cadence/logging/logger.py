"""``MMLogger``: a ``logging.Logger`` configured the OpenMMLab way, fetched by name.

A logger has a console handler (only rank 0 shows messages below ERROR) and
optionally a file handler. Loggers are instances of :class:`MMLogger` held by
cadence's instance tables (mmengine's ``ManagerMixin``), not by the ``logging``
module's manager: ``MMLogger.get_instance(name)`` finds one, the most recently
created or fetched one is *current* (``print_log(..., logger='current')``), and
third-party ``logging`` configuration does not touch them. A logger that writes
a log file also receives Python ``warnings`` (see :mod:`.warnings_capture`).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import Any

from ..utils.suggest import did_you_mean
from ._rank import device_id, host_info, process_rank, process_world_size
from .instances import (
    GlobalInstanceMixin,
    current_instance,
    instance_names,
    lookup_instance,
    own_name,
    set_current_instance,
)
from .progress import is_terminal
from .warnings_capture import capture_warnings

_ROLE_ATTR = "_cadence_role"
_LEVEL_COLORS = {"WARNING": 33, "ERROR": 31, "CRITICAL": 31}  # ANSI yellow, red
_LEVEL_NAMES = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET")

LoggerLike = logging.Logger | str | None

# mmengine.logging.logger's names of the facts a logger reads about its process (tests
# patch them there); the logger looks them up here when it is configured
_get_rank = process_rank
_get_world_size = process_world_size
_get_device_id = device_id
_get_host_info = host_info


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


def _file_handler(path: str, file_mode: str, cfg: Mapping[str, Any] | None) -> logging.Handler:
    """A ``logging.FileHandler``, or the handler ``cfg`` names (mmengine's ``file_handler_cfg``:
    ``dict(type='RotatingFileHandler', maxBytes=...)``, a class of ``logging.handlers``)."""
    if cfg is None:
        return logging.FileHandler(path, mode=file_mode, encoding="utf-8")
    from importlib import import_module

    handlers = import_module("logging.handlers")  # only for a configured handler class
    options = dict(cfg)
    kind = options.pop("type", None)
    names = sorted(
        n for n in dir(handlers)
        if isinstance(getattr(handlers, n), type)
        and issubclass(getattr(handlers, n), logging.FileHandler)
    ) + ["FileHandler"]  # fmt: skip
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


class _PendingRecords(logging.Handler):
    """The records of a logger whose file is not open yet (they go there first)."""

    limit = 10_000

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.records) < self.limit:
            self.records.append(record)


def hold_records(logger: logging.Logger) -> None:
    """Keep ``logger``'s records from now until it gets a log file, which then starts
    with them (a run logs before it may write into its work dir)."""
    if _handler(logger, "pending") is None and _handler(logger, "file") is None:
        handler = _PendingRecords()
        setattr(handler, _ROLE_ATTR, "pending")
        logger.addHandler(handler)


def _configure_file(
    logger: logging.Logger,
    path: str,
    level: int,
    file_mode: str,
    handler_cfg: Mapping[str, Any] | None = None,
) -> None:
    handler = _handler(logger, "file")
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
        pending = _handler(logger, "pending")
        if isinstance(pending, _PendingRecords):
            logger.removeHandler(pending)
            for record in pending.records:
                if record.levelno >= level:
                    handler.handle(record)
    handler.setLevel(level)


class MMLogger(logging.Logger, GlobalInstanceMixin):
    """A logger with cadence's console and file handlers, registered under ``name``.

    Args:
        name: the instance name (``MMLogger.get_instance(name)`` finds it).
        logger_name: the ``logging`` name shown in every line (default ``'cadence'``,
            ``'mmengine'`` under the mmengine alias).
        log_file: also write to this file. Rank 0 writes to it; other ranks
            write ``<stem>_rank<r><ext>`` beside it when ``distributed`` is set
            or the level is DEBUG, and nothing otherwise.
        log_level: level of the logger and its handlers (a name or a number).
        file_mode: mode the log file is opened with (``'w'`` or ``'a'``).
        distributed: let ranks other than 0 write their own log file.
        file_handler_cfg: ``dict(type=<a logging.handlers file handler>, ...)``
            instead of a plain ``logging.FileHandler`` (``filename`` defaults to
            the log file).
        distributed_rank: this process's rank; by default torch.distributed's
            rank when initialised, else ``$RANK``, else 0.
        all_ranks_console: let ranks other than 0 print below ERROR level too.
    """

    _default_instance_name = "cadence"

    def __init__(
        self,
        name: str,
        logger_name: str | None = None,
        log_file: str | os.PathLike[str] | None = None,
        log_level: int | str = "INFO",
        file_mode: str = "w",
        distributed: bool = False,
        file_handler_cfg: Mapping[str, Any] | None = None,
        *,
        distributed_rank: int | None = None,
        all_ranks_console: bool = False,
    ) -> None:
        if logger_name is None:
            logger_name = own_name("cadence")
        if not isinstance(logger_name, str) or not logger_name:
            raise TypeError(f"logger_name must be a non-empty str, got {logger_name!r}")
        logging.Logger.__init__(self, logger_name)
        self.propagate = False
        self.configure(
            log_file=log_file,
            log_level=log_level,
            file_mode=file_mode,
            distributed=distributed,
            file_handler_cfg=file_handler_cfg,
            distributed_rank=distributed_rank,
            all_ranks_console=all_ranks_console,
        )
        GlobalInstanceMixin.__init__(self, name)

    def configure(
        self,
        log_file: str | os.PathLike[str] | None = None,
        log_level: int | str = "INFO",
        file_mode: str = "w",
        distributed: bool = False,
        file_handler_cfg: Mapping[str, Any] | None = None,
        distributed_rank: int | None = None,
        all_ranks_console: bool = False,
    ) -> None:
        """Set the level and handlers again (arguments as the constructor's).

        Handlers are reused, never added twice; the file handler is replaced
        when the path changes and kept when ``log_file`` is None.
        """
        level = _to_level(log_level)
        rank = _get_rank() if distributed_rank is None else int(distributed_rank)
        self.setLevel(level)
        console_level = level if rank == 0 or all_ranks_console else max(level, logging.ERROR)
        _configure_console(self, console_level)
        if log_file is not None and (rank == 0 or distributed or level <= logging.DEBUG):
            path = rank_log_file(log_file, rank)
            _configure_file(self, path, level, file_mode, file_handler_cfg)
        if _handler(self, "file") is not None:
            capture_warnings(True, MMLogger)

    @property
    def log_file(self) -> str | None:
        """The file this logger writes to (this rank's), or ``None``."""
        return log_file_of(self)

    def setLevel(self, level: int | str) -> None:  # noqa: N802 - logging's name
        """Set the level; also forget this logger's cached level checks.

        ``logging`` clears only the caches of the loggers its manager holds.
        """
        super().setLevel(level)
        self._cache.clear()  # type: ignore[attr-defined]

    def callHandlers(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        """Hand ``record`` to this logger's own handlers only (no root, no last resort)."""
        for handler in self.handlers:
            if record.levelno >= handler.level:
                handler.handle(record)

    @classmethod
    def get_current_instance(cls) -> MMLogger:
        """The current logger; a default ``'cadence'`` one when none was created."""
        logger = current_instance(cls)
        return logger if logger is not None else get_logger(own_name(cls._default_instance_name))

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        # a copy (or unpickled logger) is the instance of the same name, as for logging's
        return _logger_named, (self.instance_name,)

    def __repr__(self) -> str:
        level = logging.getLevelName(self.level)
        return f"<MMLogger {self.instance_name!r} ({self.name}, {level})>"


def get_logger(
    name: str = "cadence",
    log_file: str | os.PathLike[str] | None = None,
    log_level: int | str = "INFO",
    distributed_rank: int | None = None,
    *,
    file_mode: str = "w",
    rank_files: bool = False,
    all_ranks_console: bool = False,
    file_handler_cfg: Mapping[str, Any] | None = None,
) -> MMLogger:
    """Configure and return the :class:`MMLogger` named ``name``; it becomes current.

    A new logger shows ``name`` in its lines. Calling it again for the same name
    reconfigures that logger (see :meth:`MMLogger.configure`; ``rank_files`` is
    its ``distributed``), so handlers never pile up.
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"logger name must be a non-empty str, got {name!r}")
    options: dict[str, Any] = dict(
        log_file=log_file,
        log_level=log_level,
        file_mode=file_mode,
        distributed=rank_files,
        file_handler_cfg=file_handler_cfg,
        distributed_rank=distributed_rank,
        all_ranks_console=all_ranks_console,
    )
    existing = lookup_instance(MMLogger, name)
    if existing is None:
        return MMLogger(name, logger_name=name, **options)
    existing.configure(**options)
    set_current_instance(MMLogger, name)
    return existing


def _logger_named(name: str) -> MMLogger:
    found = lookup_instance(MMLogger, name)
    return found if found is not None else get_logger(name)


def get_current_logger() -> MMLogger:
    """The current logger (a default 'cadence' one if none was created)."""
    return MMLogger.get_current_instance()


def log_file_of(logger: logging.Logger) -> str | None:
    """The path of the file ``logger`` writes to through cadence's handlers, if any."""
    handler = _handler(logger, "file")
    return getattr(handler, "baseFilename", None)


def print_log(msg: Any, logger: LoggerLike = None, level: int = logging.INFO) -> None:
    """Log ``msg`` to ``logger``.

    ``logger`` may be a ``logging.Logger``; ``None`` (plain ``print``);
    ``'silent'`` (drop it); ``'current'`` (the current logger); or the name
    of an :class:`MMLogger` (or of a logger of the ``logging`` module).
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
        found: logging.Logger | None = lookup_instance(MMLogger, logger)
        if found is None and logger in logging.Logger.manager.loggerDict:
            found = logging.getLogger(logger)
        if found is None:
            raise ValueError(
                f"no logger named '{logger}' has been created (use MMLogger.get_instance or "
                f"get_logger first, or logger='current'/'silent'/None)."
                f"{did_you_mean(logger, instance_names(MMLogger))}"
            )
        found.log(level, msg)
    else:
        raise TypeError(
            "logger must be a logging.Logger, a logger name, 'current', 'silent' or None, "
            f"got {type(logger).__name__}"
        )
