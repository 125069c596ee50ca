"""Which URLs cadence can reach, and the clear error for those it cannot."""

from __future__ import annotations

import os

import pytest

from cadence.cli import main
from cadence.config import Config, ConfigError
from cadence.fileio import StorageUnavailable, check_url, storage_options, url_scheme
from cadence.hooks import CheckpointHook, LoggerHook
from cadence.runner import Runner

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "examples", "blobs", "configs", "mlp_8xb64_blobs.py")


@pytest.mark.parametrize(
    ("value", "scheme"),
    [("s3://bucket/run", "s3"), ("gs://b/x", "gs"), ("HDFS://nn:8020/p", "hdfs"),
     ("work_dirs/run", None), ("/abs/run", None), ("C:/win/run", None), (None, None)],
)  # fmt: skip
def test_url_scheme(value, scheme):
    assert url_scheme(value) == scheme


def test_reachable_urls_and_local_paths_pass():
    for value in ("s3://bucket/run", "memory://run", "file:///tmp/run", "runs/a", None):
        assert check_url(value, "work_dir") is None


def test_an_unknown_scheme_names_the_key_and_the_known_ones():
    message = check_url("nosuch://bucket/run", "work_dir")
    assert message is not None
    assert message.startswith("work_dir='nosuch://bucket/run'") and "s3" in message


def test_cli_refuses_an_unknown_scheme_with_exit_2(tmp_path, capsys, blobs):
    code = main(["train", CONFIG, "--work-dir", "nosuch://bucket/run"])
    err = capsys.readouterr().err
    assert code == 2
    assert "nosuch://" in err and "Traceback" not in err
    assert "error: work_dir (--work-dir)" not in err or "nosuch://" in err
    assert not os.path.exists("nosuch:")


def test_a_bad_url_in_a_config_file_names_the_file_and_line(tmp_path):
    config = tmp_path / "cfg.py"
    config.write_text("model = dict(type='X')\nwork_dir = 'nosuch://bucket/run'\n")
    with pytest.raises(ConfigError) as info:
        Runner.from_cfg(Config.fromfile(str(config)))
    assert f"{config}:2" in str(info.value) and "nosuch://" in str(info.value)


def test_other_path_arguments_check_their_urls(tmp_path):
    with pytest.raises(ValueError, match="CheckpointHook.out_dir='nosuch://b/c'"):
        CheckpointHook(out_dir="nosuch://b/c")
    with pytest.raises(ValueError, match="LoggerHook.out_dir='nosuch://b/c'"):
        LoggerHook(out_dir="nosuch://b/c")
    with pytest.raises(ValueError, match="load_from='nosuch://b/w.pth'"):
        Runner(model=dict(type="X"), work_dir=str(tmp_path), load_from="nosuch://b/w.pth")


def test_backend_args_become_storage_options():
    assert storage_options(dict(backend="local")) == {}
    assert storage_options(dict(endpoint_url="http://x", path_mapping={"a": "b"})) == {
        "endpoint_url": "http://x"
    }
    with pytest.raises(StorageUnavailable, match="backend='petrel'"):
        storage_options(dict(backend="petrel"))
