"""A run's console: short lines, details only when verbose; the log file keeps everything."""

from __future__ import annotations

import uuid

import pytest

from cadence.logging import get_logger
from cadence.logging.console import DETAIL, VERBOSE_ENV, tidy_console


@pytest.fixture
def logger(tmp_path):
    name = f"cadence-test-console-{uuid.uuid4().hex[:8]}"
    logger = get_logger(name, log_file=str(tmp_path / "run.log"), distributed_rank=0)
    tidy_console(logger)
    tidy_console(logger)  # twice changes nothing
    yield logger
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


def test_console_lines_are_short_and_details_stay_in_the_file(logger, tmp_path, capsys,
                                                              monkeypatch):  # fmt: skip
    monkeypatch.delenv(VERBOSE_ENV, raising=False)
    logger.info("model: Net, 10 parameters")
    logger.info("Hooks:\nbefore_run: ...", extra=DETAIL)
    logger.warning("careful")
    assert capsys.readouterr().out == "model: Net, 10 parameters\nWARNING: careful\n"
    for handler in logger.handlers:
        handler.flush()
    text = (tmp_path / "run.log").read_text()
    assert f" - {logger.name} - INFO - Hooks:\nbefore_run: ..." in text
    assert f" - {logger.name} - INFO - model: Net, 10 parameters" in text


def test_verbose_shows_details_on_the_console(logger, capsys, monkeypatch):
    monkeypatch.setenv(VERBOSE_ENV, "1")
    logger.info("Hooks:\nbefore_run: ...", extra=DETAIL)
    assert capsys.readouterr().out == "Hooks:\nbefore_run: ...\n"
