"""Every test here starts with no current logger and leaves none; ``warnings_logged``
collects what the analyses log to the current logger."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from cadence.logging import MMLogger, isolated_instances


@pytest.fixture(autouse=True)
def _isolate_instances() -> Iterator[None]:
    with isolated_instances():
        yield


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def warnings_logged() -> Iterator[list[str]]:
    logger = MMLogger.get_instance("analysis_test")
    handler = _Collect()
    logger.addHandler(handler)
    yield handler.messages
    logger.removeHandler(handler)
