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


def test_the_summary_takes_each_metrics_best_by_its_own_rule():
    from types import SimpleNamespace

    from cadence.hooks.logger_hook import metric_rule
    from cadence.hooks.run_summary import _metric_rows
    from cadence.logging import MessageHub

    hub = MessageHub(f"summary-{uuid.uuid4().hex[:8]}")
    for acc, loss in ((50.0, 2.0), (70.0, 1.0), (60.0, 1.5)):
        hub.update_scalar("val/clean/accuracy/top1", acc)
        hub.update_scalar("val/clean/loss", loss)
    hub.update_scalar("val/widgets", 3.0)  # no rule: no best
    rows = _metric_rows(SimpleNamespace(message_hub=hub), metric_rule)
    assert rows == [("clean/accuracy/top1", "60.0000", "70.0000"),
                    ("clean/loss", "1.5000", "1.0000"), ("widgets", "3.0000", "")]  # fmt: skip
