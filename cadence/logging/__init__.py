"""Logging: loggers, the message hub and history buffers.

The log processor, which turns a runner's message hub into log lines, is
:mod:`cadence.hooks.log_processor` (``cadence.runner.LogProcessor``, mmengine's path).
"""

from .history_buffer import HistoryBuffer, resolve_tensors
from .instances import GlobalInstanceMixin, isolated_instances
from .logger import MMLogger, get_current_logger, get_logger, print_log, rank_log_file
from .message_hub import MessageHub
from .progress import PROGRESS_MODES, ProgressBar
from .warnings_capture import capture_warnings

__all__ = [
    "GlobalInstanceMixin",
    "HistoryBuffer",
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
