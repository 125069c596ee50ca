"""MMLogger as mmengine's: a logging.Logger fetched by instance name, files per rank, warnings."""

from __future__ import annotations

import copy
import logging
import uuid
import warnings
from collections.abc import Iterator

import pytest

from cadence.logging import MMLogger, capture_warnings, print_log


@pytest.fixture
def name() -> Iterator[str]:
    """A fresh instance name; the logger's handlers are closed after the test."""
    instance = f"mm-{uuid.uuid4().hex[:8]}"
    yield instance
    if MMLogger.check_instance_created(instance):
        logger = MMLogger.get_instance(instance)
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()


def test_a_real_logger_found_by_instance_name_not_by_logging(name, capsys):
    logger = MMLogger.get_instance(name, logger_name="shown", distributed_rank=0)
    assert isinstance(logger, logging.Logger)
    assert (logger.instance_name, logger.name) == (name, "shown")
    assert logging.getLogger("shown") is not logger
    assert MMLogger.get_instance(name) is logger
    logger.info("hello")
    assert " - shown - INFO - hello" in capsys.readouterr().out
    assert MMLogger.get_instance(f"{name}-2", distributed_rank=0).name == "cadence"


def test_current_is_the_last_created_and_kwargs_on_a_fetch_warn(name):
    first = MMLogger.get_instance(name, distributed_rank=0)
    second = MMLogger(f"{name}-b", distributed_rank=0)
    assert MMLogger.get_current_instance() is second
    with pytest.warns(UserWarning, match="already exists"):
        assert MMLogger.get_instance(name, log_level="DEBUG") is first
    assert first.level == logging.INFO  # the arguments of a fetch are ignored


def test_current_instance_defaults_to_cadence():
    logger = MMLogger.get_current_instance()
    assert logger.instance_name == "cadence" and logger.name == "cadence"


def test_print_log_by_instance_name(name, capsys):
    MMLogger.get_instance(name, logger_name="named", distributed_rank=0)
    print_log("to it", logger=name, level=logging.WARNING)
    assert " - named - WARNING - to it" in capsys.readouterr().out
    with pytest.raises(ValueError, match="no logger named 'absent'"):
        print_log("x", logger="absent")


def test_rank_zero_writes_the_file_and_other_ranks_only_when_asked(name, tmp_path):
    log_file = tmp_path / "run.log"
    zero = MMLogger(name, log_file=str(log_file), distributed_rank=0)
    assert zero.log_file == str(log_file)
    quiet = MMLogger(f"{name}-1", log_file=str(log_file), distributed_rank=1)
    assert quiet.log_file is None
    loud = MMLogger(f"{name}-2", log_file=str(log_file), distributed_rank=2, distributed=True)
    debug = MMLogger(f"{name}-3", log_file=str(log_file), distributed_rank=3, log_level="DEBUG")
    assert loud.log_file == str(tmp_path / "run_rank2.log")
    assert debug.log_file == str(tmp_path / "run_rank3.log")
    for logger in (zero, quiet, loud, debug):
        for handler in list(logger.handlers):
            logger.removeHandler(handler)
            handler.close()


def test_file_handler_cfg_builds_a_logging_handler(name, tmp_path):
    log_file = tmp_path / "rot.log"
    cfg = dict(type="RotatingFileHandler", maxBytes=1000, backupCount=2)
    logger = MMLogger(name, log_file=str(log_file), file_handler_cfg=cfg, distributed_rank=0)
    handler = logger.handlers[-1]
    assert type(handler).__name__ == "RotatingFileHandler" and handler.maxBytes == 1000
    logger.info("rotating")
    assert "rotating" in log_file.read_text()
    with pytest.raises(ValueError, match="Did you mean one of 'RotatingFileHandler'"):
        MMLogger(f"{name}-x", log_file=str(log_file), file_handler_cfg=dict(type="RotatingFile"))


def test_set_level_takes_effect_after_a_cached_check(name, capsys):
    logger = MMLogger(name, distributed_rank=0)
    assert logger.isEnabledFor(logging.INFO)  # fills logging's per-logger cache
    logger.setLevel(logging.WARNING)
    logger.info("hidden")
    assert "hidden" not in capsys.readouterr().out


def test_no_handler_means_no_output_and_copies_are_the_same_logger(name, capsys):
    logger = MMLogger(name, distributed_rank=0)
    assert copy.deepcopy(logger) is logger
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.error("nowhere")  # no last-resort handler, no root logger
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


@pytest.fixture
def python_display(monkeypatch) -> list[str]:
    """Where Python shows warnings once pytest's recording is set aside (as outside pytest)."""
    shown: list[str] = []

    def show(message: warnings.WarningMessage) -> None:
        shown.append(str(message.message))

    monkeypatch.setattr(warnings, "_showwarnmsg_impl", show)
    return shown


def test_python_warnings_reach_the_current_logger_with_a_file(
    name, tmp_path, capsys, python_display
):
    log_file = tmp_path / "run.log"
    with warnings.catch_warnings():  # restores warnings.showwarning afterwards
        warnings.simplefilter("always")
        MMLogger(name, logger_name="runlog", log_file=str(log_file), distributed_rank=0)
        warnings.warn("mind the gap", UserWarning, stacklevel=1)
        warnings.warn("to a file", UserWarning, stacklevel=1)
        capture_warnings(False)
        warnings.warn("back to Python", UserWarning, stacklevel=1)
    text = log_file.read_text()
    assert " - runlog - WARNING - " in text
    assert "test_mmlogger.py" in text and "UserWarning: mind the gap" in text
    assert "UserWarning: to a file" in text and "back to Python" not in text
    assert "UserWarning: mind the gap" in capsys.readouterr().out
    assert python_display == ["back to Python"]


def test_a_recording_block_keeps_recording_after_the_logger_appears(name, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        MMLogger(name, log_file=str(tmp_path / "run.log"), distributed_rank=0)
        warnings.warn("recorded", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["recorded"]
    assert "recorded" not in (tmp_path / "run.log").read_text()


def test_only_a_logger_with_a_file_takes_over_warnings(name, tmp_path):
    with warnings.catch_warnings():
        before = warnings.showwarning
        MMLogger(name, distributed_rank=0)
        assert warnings.showwarning is before
        MMLogger(f"{name}-file", log_file=str(tmp_path / "a.log"), distributed_rank=0)
        assert warnings.showwarning is not before
    logger = MMLogger.get_instance(f"{name}-file")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()


def test_any_file_handler_class_of_logging_handlers_is_accepted(name, tmp_path):
    cfg = dict(type="BaseRotatingHandler", mode="a")
    logger = MMLogger(name, log_file=str(tmp_path / "b.log"), file_handler_cfg=cfg,
                      distributed_rank=0)  # fmt: skip
    assert type(logger.handlers[-1]) is logging.handlers.BaseRotatingHandler


def test_instance_table_is_the_class_instance_dict(name):
    logger = MMLogger.get_instance(name, distributed_rank=0)
    assert MMLogger._instance_dict[name] is logger  # mmengine's ManagerMixin attribute
    MMLogger._instance_dict.clear()
    assert not MMLogger.check_instance_created(name)
    MMLogger._instance_dict = {}  # code written for mmengine replaces the table
    again = MMLogger.get_instance(name, distributed_rank=0)
    assert again is not logger and MMLogger._instance_dict == {name: again}


def test_device_id_follows_local_rank_and_visible_cuda_devices(monkeypatch):
    from cadence.logging.logger import _get_device_id

    monkeypatch.setenv("LOCAL_RANK", "1")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,5")
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    assert _get_device_id() == 1
    monkeypatch.setattr("torch.cuda.is_available", lambda: True)
    assert _get_device_id() == 5


def test_under_the_mmengine_alias_the_default_names_are_mmengine():
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import cadence.compat.mmengine
        from mmengine.logging import MMLogger, MessageHub
        assert MMLogger.get_current_instance().instance_name == 'mmengine'
        assert MMLogger.get_instance('x').name == 'mmengine'
        assert MessageHub.get_current_instance().instance_name == 'mmengine'
        print('ok')
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)  # fmt: skip
    assert result.stdout.strip() == "ok", result.stderr
