"""get_logger / print_log: handlers, files, ranks and the current logger."""

from __future__ import annotations

import io
import logging
import sys
import uuid

import pytest

from cadence.logging import MMLogger, get_current_logger, get_logger, print_log, rank_log_file


class FakeTerminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.fixture
def name():
    """A fresh logger name; its handlers are closed after the test."""
    logger_name = f"cadence-test-{uuid.uuid4().hex[:8]}"
    yield logger_name
    if MMLogger.check_instance_created(logger_name):
        logger = MMLogger.get_instance(logger_name)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()


def test_console_prints_info_on_rank_zero(name, capsys):
    logger = get_logger(name, distributed_rank=0)
    logger.info("hello there")
    logger.debug("hidden")
    out = capsys.readouterr().out
    assert f" - {name} - INFO - hello there" in out
    assert "hidden" not in out
    assert logger.propagate is False


def test_repeated_calls_do_not_add_handlers(name, tmp_path):
    first = get_logger(name, distributed_rank=0)
    assert len(first.handlers) == 1
    assert get_logger(name, distributed_rank=0) is first
    assert len(first.handlers) == 1
    log_file = tmp_path / "run.log"
    get_logger(name, log_file=log_file, distributed_rank=0)
    get_logger(name, log_file=log_file, distributed_rank=0)
    assert len(first.handlers) == 2
    get_logger(name, distributed_rank=0)  # no log_file: the file handler stays
    assert len(first.handlers) == 2
    other = tmp_path / "other.log"
    get_logger(name, log_file=other, distributed_rank=0)
    assert len(first.handlers) == 2
    first.info("to the new file")
    assert "to the new file" in other.read_text()
    assert "to the new file" not in log_file.read_text()


def test_file_output_has_no_colors_and_names_error_locations(name, tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "stdout", FakeTerminal())  # the console colors; the file must not
    log_file = tmp_path / "logs" / "run.log"  # parent created on demand
    logger = get_logger(name, log_file=log_file, log_level="DEBUG", distributed_rank=0)
    logger.debug("details")
    logger.warning("careful")
    logger.error("broken")
    text = log_file.read_text()
    assert f" - {name} - DEBUG - details" in text
    assert f" - {name} - WARNING - careful" in text
    assert "test_logger.py - test_file_output_has_no_colors_and_names_error_locations" in text
    assert "\x1b[" not in text


def test_console_colors_warning_and_error_level_names_on_a_terminal(name, monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    logger = get_logger(name, distributed_rank=0)
    logger.info("plain")
    logger.warning("colored")
    lines = terminal.getvalue().splitlines()
    assert "\x1b[" not in lines[0]
    assert "\x1b[33m" in lines[1]  # yellow WARNING
    assert lines[1].endswith("colored")


def test_redirected_console_gets_no_control_characters(name, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    redirected = io.StringIO()
    monkeypatch.setattr(sys, "stdout", redirected)
    logger = get_logger(name, distributed_rank=0)
    logger.warning("careful")
    logger.error("broken")
    assert "careful" in redirected.getvalue() and "broken" in redirected.getvalue()
    assert "\x1b[" not in redirected.getvalue()
    monkeypatch.setenv("FORCE_COLOR", "1")
    logger.warning("forced")
    assert "\x1b[33m" in redirected.getvalue()


def test_repeated_warnings_are_shown_once(name, capsys):
    logger = get_logger(name, distributed_rank=0)
    logger.warning("same thing")
    logger.warning("same thing")
    logger.warning("another")
    out = capsys.readouterr().out
    assert out.count("same thing") == 1 and out.count("another") == 1


def test_other_ranks_print_errors_only_and_write_no_file(name, tmp_path, capsys):
    log_file = tmp_path / "run.log"
    logger = get_logger(name, log_file=log_file, distributed_rank=1)
    logger.info("info from rank 1")
    logger.error("error from rank 1")
    out = capsys.readouterr().out
    assert "info from rank 1" not in out and "error from rank 1" in out
    assert not log_file.exists() and list(tmp_path.iterdir()) == []


def test_rank_files_give_each_rank_its_own_file(name, tmp_path, capsys):
    log_file = tmp_path / "run.log"
    logger = get_logger(name, log_file=log_file, distributed_rank=3, rank_files=True)
    logger.info("rank three")
    assert "rank three" in (tmp_path / "run_rank3.log").read_text()
    assert not log_file.exists()
    assert "rank three" not in capsys.readouterr().out
    get_logger(name, distributed_rank=3, all_ranks_console=True).info("now visible")
    assert "now visible" in capsys.readouterr().out


def test_rank_is_read_from_the_environment(name, monkeypatch, capsys):
    monkeypatch.setenv("RANK", "2")
    get_logger(name).info("quiet")
    assert capsys.readouterr().out == ""


def test_rank_log_file_names():
    assert rank_log_file("work/run.log", 0) == "work/run.log"
    assert rank_log_file("work/run.log", 3) == "work/run_rank3.log"


def test_bad_level_suggests_a_name(name):
    with pytest.raises(ValueError, match="Did you mean 'INFO'"):
        get_logger(name, log_level="INF")


def test_print_log_targets(name, capsys):
    print_log("via print")
    assert capsys.readouterr().out == "via print\n"
    print_log("dropped", logger="silent")
    assert capsys.readouterr().out == ""
    logger = get_logger(name, distributed_rank=0)
    assert get_current_logger() is logger
    print_log("to current", logger="current", level=logging.WARNING)
    print_log("by name", logger=name)
    print_log("by object", logger=logger)
    out = capsys.readouterr().out
    assert " - WARNING - to current" in out
    assert " - INFO - by name" in out and " - INFO - by object" in out


def test_print_log_rejects_unknown_loggers(name):
    get_logger(name, distributed_rank=0)
    with pytest.raises(ValueError, match=f"Did you mean '{name}'"):
        print_log("x", logger=name + "x")
    with pytest.raises(TypeError, match="logging.Logger"):
        print_log("x", logger=3)  # type: ignore[arg-type]


def test_current_logger_defaults_to_cadence(capsys):
    logger = get_current_logger()
    assert logger.name == "cadence"
    assert MMLogger.get_current_instance() is logger


def test_mmlogger_entry_points(name, tmp_path):
    logger = MMLogger.get_instance(name, log_file=str(tmp_path / "a.log"))
    assert MMLogger.check_instance_created(name)
    assert MMLogger.get_instance(name) is logger
    assert len(logger.handlers) == 2
