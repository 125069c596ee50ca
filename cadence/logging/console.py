"""What a run's console shows, as opposed to its log file.

The log file keeps the full record (``time - name - LEVEL - message``, the
environment, the config, the hook table, every item of a log line). The console of a
run gets short lines: INFO messages without the prefix, other levels as ``LEVEL: message``,
and no *detail* records (logged with ``extra=DETAIL``) unless the run is
verbose (``cadence train --verbose``, or ``CADENCE_VERBOSE=1`` in the
environment, which also reaches processes started by torchrun).
"""

from __future__ import annotations

import logging
import os

#: ``logger.info(text, extra=DETAIL)``: the record goes to the log file, and to the
#: console only when the run is verbose.
DETAIL = {"cadence_detail": True}

#: The environment variable that makes runs verbose.
VERBOSE_ENV = "CADENCE_VERBOSE"

_ROLE_ATTR = "_cadence_role"  # how cadence.logging.logger marks its console handler


def is_verbose() -> bool:
    """Whether detail records are printed on the console too."""
    return os.environ.get(VERBOSE_ENV, "").lower() in ("1", "true", "yes")


class LogLine(str):
    """A log line as the log file keeps it (every item: mmengine's line), carrying in
    ``console`` the same fitted to the console (items wrapped, never a loss term hidden)."""

    console: str

    def __new__(cls, full: str, console: str) -> LogLine:
        line = super().__new__(cls, full)
        line.console = console
        return line

    def __reduce__(self) -> tuple[type, tuple[str, str]]:  # lines go between ranks
        return (LogLine, (str(self), self.console))


class ConsoleFormatter(logging.Formatter):
    """``message`` for INFO and below, ``LEVEL: message`` above, with the code location
    for errors; tracebacks as usual."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if isinstance(record.msg, LogLine) and not record.args:
            message = record.msg.console
        if record.levelno >= logging.ERROR:
            message = f"{record.levelname}: {record.pathname}:{record.lineno}: {message}"
        elif record.levelno > logging.INFO:
            message = f"{record.levelname}: {message}"
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            message += "\n" + self.formatStack(record.stack_info)
        return message


class HideDetails(logging.Filter):
    """Drops detail records (see :data:`DETAIL`) unless the run is verbose."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(record, "cadence_detail", False) or is_verbose()


def tidy_console(logger: logging.Logger) -> None:
    """Give ``logger``'s console handler the short format and hide detail records there
    (the file handler is left as it is). Calling it again changes nothing."""
    for handler in logger.handlers:
        if getattr(handler, _ROLE_ATTR, None) != "console":
            continue
        handler.setFormatter(ConsoleFormatter())
        if not any(isinstance(f, HideDetails) for f in handler.filters):
            handler.addFilter(HideDetails())


__all__ = ["DETAIL", "VERBOSE_ENV", "ConsoleFormatter", "HideDetails", "LogLine", "is_verbose",
           "tidy_console"]  # fmt: skip
