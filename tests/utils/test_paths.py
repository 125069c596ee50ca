"""URLs where cadence takes a path are refused (until remote storage lands), never
written to a local folder named after the scheme."""

from __future__ import annotations

import os

import pytest

from cadence.cli import main
from cadence.config import Config, ConfigError
from cadence.hooks import CheckpointHook
from cadence.inference.predictor import resolve_checkpoint
from cadence.runner import Runner, publish_checkpoint
from cadence.utils.paths import url_scheme

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "examples", "blobs", "configs", "mlp_8xb64_blobs.py")


@pytest.mark.parametrize(
    ("value", "scheme"),
    [("s3://bucket/run", "s3"), ("gs://b/x", "gs"), ("hdfs://nn:8020/p", "hdfs"),
     ("work_dirs/run", None), ("/abs/run", None), ("C:/win/run", None), (None, None)],
)  # fmt: skip
def test_url_scheme(value, scheme):
    assert url_scheme(value) == scheme


def test_cli_refuses_a_bucket_work_dir_with_exit_2(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code = main(["train", CONFIG, "--work-dir", "s3://bucket/run"])
    err = capsys.readouterr().err
    assert code == 2
    assert "key 'work_dir'" in err or "work_dir='s3://bucket/run'" in err
    assert "does not read or write s3:// yet" in err and "Traceback" not in err
    assert not os.path.exists(tmp_path / "s3:")


def test_a_url_in_a_config_file_names_the_file_and_line(tmp_path):
    config = tmp_path / "cfg.py"
    config.write_text("model = dict(type='X')\nwork_dir = 'gs://bucket/run'\n")
    with pytest.raises(ConfigError) as info:
        Runner.from_cfg(Config.fromfile(str(config)))
    assert f"{config}:2" in str(info.value) and "gs://" in str(info.value)


def test_other_path_arguments_refuse_urls(tmp_path):
    with pytest.raises(ValueError, match="CheckpointHook.out_dir='s3://b/c' is a URL"):
        CheckpointHook(out_dir="s3://b/c")
    with pytest.raises(ValueError, match="load_from='s3://b/w.pth' is a URL"):
        Runner(model=dict(type="X"), work_dir=str(tmp_path), load_from="s3://b/w.pth")
    with pytest.raises(ValueError, match="checkpoint='s3://b/w.pth' is a URL"):
        resolve_checkpoint("s3://b/w.pth")
    with pytest.raises(ValueError, match="out_file='s3://b/m.pth' is a URL"):
        publish_checkpoint(str(tmp_path / "x.pth"), "s3://b/m.pth")
