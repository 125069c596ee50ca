"""Logging: loggers, the message hub, history buffers and the log processor."""

from .history_buffer import HistoryBuffer, resolve_tensors
from .instances import GlobalInstanceMixin, isolated_instances
from .log_processor import LogProcessor
from .logger import MMLogger, get_current_logger, get_logger, print_log, rank_log_file
from .message_hub import MessageHub
from .progress import PROGRESS_MODES, ProgressBar
from .warnings_capture import capture_warnings

__all__ = [
    "GlobalInstanceMixin",
    "HistoryBuffer",
    "LogProcessor",
    "MMLogger",
    "MessageHub",
    "PROGRESS_MODES",
    "ProgressBar",
    "capture_warnings",
    "get_current_logger",
    "get_logger",
    "isolated_instances",
    "print_log",
    "rank_log_file",
    "resolve_tensors",
]
