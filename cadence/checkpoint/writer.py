"""Writing one checkpoint at a time on a background thread."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from .files import CheckpointError


class AsyncCheckpointWriter:
    """Runs one checkpoint write at a time on a background thread.

    :meth:`wait` blocks until the current write is done and raises its error,
    if any, as a :class:`CheckpointError`; an error is also logged the moment
    it happens, so it is never lost.
    """

    def __init__(self, logger: Any = None) -> None:
        self.logger = logger or logging.getLogger("cadence")
        self._thread: threading.Thread | None = None
        self._error: tuple[str, BaseException] | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def submit(self, job: Callable[[], None], what: str, *, queue: bool = False) -> None:
        """Wait for the previous write, then start ``job`` (writing ``what``). With
        ``queue`` it does not wait: ``job`` starts on its thread once the previous write
        is done, and is skipped if that write failed (its error is raised by :meth:`wait`)."""
        previous = self._thread if queue else None
        if not queue:
            self.wait()
        self._thread = threading.Thread(
            target=self._run, args=(job, what, previous), name="cadence-checkpoint-writer",
            daemon=False,
        )  # fmt: skip
        self._thread.start()

    def _run(self, job: Callable[[], None], what: str, previous: threading.Thread | None) -> None:
        if previous is not None:
            previous.join()
            if self._error is not None:
                return
        try:
            job()
        except BaseException as e:  # noqa: BLE001 - handed to the training thread
            self._error = (what, e)
            self.logger.error(f"writing checkpoint {what} in the background failed: {e!r}")

    def wait(self) -> None:
        """Block until no write is running; raise the error of the last one, if any."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self._error is not None:
            what, error = self._error
            self._error = None
            raise CheckpointError(
                f"writing checkpoint {what} in the background failed: {error!r}"
            ) from error
