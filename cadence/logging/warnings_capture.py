"""Python ``warnings`` shown through the current cadence logger (console and log file).

Once a logger with a log file exists (the runner's), :func:`capture_warnings`
replaces ``warnings.showwarning`` so that a warning becomes a WARNING record of
the *current* logger: it lands in the run's log file, and on the console of rank 0
only. Warnings aimed at an explicit file, or shown while no logger with handlers is
current, go where Python sends them. ``warnings.catch_warnings`` blocks keep
working: they restore what they found, and a block recording warnings
(``record=True``, ``pytest.warns``, pytest's own capture) still records them, even
when the logger was set up inside it.
"""

from __future__ import annotations

import threading
import warnings
from typing import Any, TextIO

from .instances import current_instance

_state = threading.local()
_original: Any = None
_family: Any = None


def _show(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    recorder: Any = getattr(warnings, "_showwarnmsg_impl", None)
    if isinstance(getattr(recorder, "__self__", None), list):
        # inside catch_warnings(record=True): it swaps in its list's append; keep recording
        recorder(warnings.WarningMessage(message, category, filename, lineno, file, line))
        return
    logger = current_instance(_family) if _family is not None else None
    if file is not None or logger is None or not logger.handlers or getattr(_state, "busy", False):
        fallback = _original or warnings._showwarning_orig  # type: ignore[attr-defined]
        fallback(message, category, filename, lineno, file, line)
        return
    _state.busy = True  # a warning raised while logging one goes to Python's own display
    try:
        logger.warning(f"{filename}:{lineno}: {category.__name__}: {message}")
    finally:
        _state.busy = False


def capture_warnings(enabled: bool = True, family: Any = None) -> None:
    """Route Python warnings to the current logger of ``family`` (on), or stop (off).

    ``family`` is the logger class whose current instance receives them
    (:class:`~cadence.logging.MMLogger`, remembered from the first call).
    """
    global _original, _family
    if family is not None:
        _family = family
    if enabled:
        if warnings.showwarning is not _show:
            _original = warnings.showwarning
            warnings.showwarning = _show
    elif warnings.showwarning is _show:
        warnings.showwarning = _original
        _original = None
