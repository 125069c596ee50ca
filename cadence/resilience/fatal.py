"""Ending a process from a watch thread: its Python stacks, a last message, ``os._exit``.

The watch threads (the preemption grace period, the hang watchdog) end a process
whose main thread is stuck, so nothing may wait on that thread: the message goes
to file descriptor 2 directly, the log gets it from a helper thread that is
given up after a moment (a handler lock held by the stuck thread cannot block the
exit), and ``os._exit`` skips the interpreter's shutdown.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import tempfile
import threading
from typing import NoReturn

from ..utils.exit_codes import report


def python_stacks() -> str:
    """Every thread's Python stack (``faulthandler``'s dump, most recent call first),
    preceded by the names of the threads."""
    names = ", ".join(
        f"{thread.ident:#018x} {thread.name}"
        for thread in threading.enumerate()
        if thread.ident is not None
    )
    with tempfile.TemporaryFile(mode="w+") as dump:
        faulthandler.dump_traceback(file=dump, all_threads=True)
        dump.seek(0)
        stacks = dump.read()
    return f"threads: {names}\n{stacks}"


def say(text: str, logger: logging.Logger | None = None) -> None:
    """Write ``text`` to stderr at once and to ``logger`` (critical) if it can within 2 s."""
    data = (text.rstrip("\n") + "\n").encode()
    try:
        while data:
            data = data[os.write(2, data) :]
    except OSError:
        pass
    if logger is not None:
        writer = threading.Thread(target=_log, args=(logger, text.strip()), daemon=True)
        writer.start()
        writer.join(timeout=2)


def exit_now(code: int, text: str, logger: logging.Logger | None = None) -> NoReturn:
    """:func:`say` ``text``, then end the process with ``code`` without any cleanup."""
    say(text, logger)
    report(code)  # for the --nproc parent, which torchrun would tell only "1"
    os._exit(code)


def _log(logger: logging.Logger, message: str) -> None:
    logger.critical(message)
    for handler in logger.handlers:
        handler.flush()


__all__ = ["exit_now", "python_stacks", "say"]
