"""file_client_args/backend_args are honoured: storage options for a URL out_dir; and
LoggerHook(out_dir=...) copies the logs there at the end of the run, as mmengine does."""

from __future__ import annotations

import os
import sys
import warnings

import pytest

from cadence.hooks import CheckpointHook, LoggerHook

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "runner"))  # fmt: skip
from runner_toys import register_toys, toy_config, train_counting  # noqa: E402


@pytest.fixture(autouse=True)
def _toys() -> None:
    register_toys()


@pytest.mark.parametrize("hook_type", (CheckpointHook, LoggerHook))
@pytest.mark.parametrize("key", ["file_client_args", "backend_args"])
def test_storage_args_are_kept_without_a_warning(hook_type: type, key: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        hook = hook_type(**{key: dict(endpoint_url="http://127.0.0.1:9")})
    assert hook.backend_args == {"endpoint_url": "http://127.0.0.1:9"}


def test_logger_out_dir_gets_the_log_files(tmp_path) -> None:
    hooks = dict(logger=dict(type="LoggerHook", out_dir=str(tmp_path / "logs"), keep_local=False))
    runner, _ = train_counting(toy_config(tmp_path / "work", 1, default_hooks=hooks))
    copied = tmp_path / "logs" / "work" / f"{runner.timestamp}.log"
    assert copied.is_file() and "Saving checkpoint at 1 epochs" in copied.read_text()
    assert not os.path.exists(os.path.join(runner.log_dir, f"{runner.timestamp}.log"))
    assert (tmp_path / "logs" / "work" / "vis_data" / "config.py").is_file()


@pytest.mark.slow
def test_logger_out_dir_in_a_bucket(tmp_path, s3) -> None:
    bucket = s3.bucket()
    hooks = dict(logger=dict(type="LoggerHook", out_dir=bucket + "/logs"))
    runner, _ = train_counting(toy_config(tmp_path / "work", 1, default_hooks=hooks))
    log = f"{bucket}/logs/work/{runner.timestamp}.log"
    assert b"Saving checkpoint at 1 epochs" in s3.fs().cat_file(log)
