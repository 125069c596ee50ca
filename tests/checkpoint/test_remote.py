"""Runs whose work dir is a bucket: a real S3 API (moto's server) reached with s3fs."""

from __future__ import annotations

import json
import os
import sys

import pytest
import torch
from fresh_python import run_python
from runner_toys import log_text, toy_config, train_counting

from cadence.checkpoint import manifest_path, read_checkpoint
from cadence.checkpoint.remote import RemoteStorage
from cadence.fileio.staging import staging_root
from cadence.runner import Runner

pytestmark = pytest.mark.slow
HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER_TESTS = os.path.join(os.path.dirname(HERE), "runner")


def names(s3, url):
    """The file names directly under ``url`` (a fresh listing)."""
    fs = s3.fs()
    return sorted(p.rsplit("/", 1)[-1] for p in fs.ls(url, detail=False))


def weights(path):
    return read_checkpoint(path)["state_dict"]


def write_config(tmp_path, work_dir, max_epochs, extra="", **overrides):
    """A config file of the toy run, its toys registered by a module beside it."""
    (tmp_path / "toys_registered.py").write_text(
        "from runner_toys import Blobs, ToyClassifier\n"
        "from cadence.registry import DATASETS, MODELS\n"
        "DATASETS.register_module(module=Blobs, force=True)\n"
        "MODELS.register_module(module=ToyClassifier, force=True)\n" + extra
    )
    config = tmp_path / f"cfg_{max_epochs}.py"
    config.write_text(
        "custom_imports = dict(imports=['toys_registered'], allow_failed_imports=False)\n"
        + "\n".join(
            f"{k} = {v!r}"
            for k, v in toy_config(work_dir, max_epochs, **overrides).to_dict().items()
        )  # fmt: skip
    )
    return str(config)


def cadence_train(tmp_path, config, staging, *args):
    """``cadence train`` in a new process (its own staging folder: another machine)."""
    path = os.pathsep.join([str(tmp_path), RUNNER_TESTS, os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path, "CADENCE_STAGING_DIR": str(staging)}
    return run_python(["-m", "cadence", "train", config, *args], timeout=180, env=env)


def test_a_bucket_run_resumed_in_a_fresh_process_ends_bitwise_equal_to_a_local_run(tmp_path, s3):
    run = s3.bucket() + "/run"
    hooks = dict(
        checkpoint=dict(type="CheckpointHook", interval=1),
        logger=dict(type="LoggerHook", interval=1),
    )  # scalars every iteration
    first = cadence_train(tmp_path, write_config(tmp_path, run, 2, default_hooks=hooks),
                          tmp_path / "machine_a")  # fmt: skip
    assert first.returncode == 0, first.stderr[-3000:]
    assert {"epoch_1.pth", "epoch_2.pth", "last_checkpoint"} <= set(names(s3, run))
    assert s3.fs().cat_file(f"{run}/last_checkpoint") == b"epoch_2.pth"

    second = cadence_train(tmp_path, write_config(tmp_path, run, 4, default_hooks=hooks),
                           tmp_path / "machine_b", "--resume")  # fmt: skip
    assert second.returncode == 0, second.stderr[-3000:]
    assert not (tmp_path / "s3:").exists() and not os.path.exists("s3:")

    local, _ = train_counting(toy_config(tmp_path / "local", 4))
    fetched = tmp_path / "epoch_4.pth"
    s3.fs().get_file(f"{run}/epoch_4.pth", str(fetched))
    s3.fs().get_file(f"{run}/epoch_4.pth.manifest.json", manifest_path(str(fetched)))
    expected = weights(os.path.join(local.work_dir, "epoch_4.pth"))
    got = weights(str(fetched))
    assert expected.keys() == got.keys()
    assert all(torch.equal(expected[k], got[k]) for k in expected)
    # logs and the config dump are in the bucket, one folder per run
    fs = s3.fs()
    logs = [p for p in fs.find(run) if p.endswith(".log")]
    assert len(logs) == 2, logs
    assert any("Resumed from" in fs.cat_file(p).decode() for p in logs)
    assert any(p.endswith(".py") for p in fs.find(run))
    scalars = [p for p in fs.find(run) if p.endswith("vis_data/scalars.json")]
    assert len(scalars) == 2 and all(fs.cat_file(p) for p in scalars), scalars
    # machine b read the bucket's run records before appending its own
    records = json.loads(fs.cat_file(f"{run}/run.json"))
    assert [r["resumed"] for r in records] == [False, True]
    assert records[1]["start"]["epoch"] == 2
    assert fs.cat_file(f"{run}/model_summary.txt").startswith(b"module")


KILL_AFTER_WEIGHTS = """
import os, signal
from cadence.checkpoint.remote import RemoteStorage

_push = RemoteStorage.push_file

def push_file(self, path, source=None):
    _push(self, path, source)
    if path.endswith("epoch_2.pth"):  # the weights are up, the manifest is not
        os.kill(os.getpid(), signal.SIGKILL)

RemoteStorage.push_file = push_file
"""


def test_a_kill_during_upload_resumes_from_the_last_complete_checkpoint(tmp_path, s3):
    run = s3.bucket() + "/run"
    staging = tmp_path / "machine_a"
    config = write_config(tmp_path, run, 3, extra=KILL_AFTER_WEIGHTS)
    killed = cadence_train(tmp_path, config, staging)
    assert killed.returncode == -9
    uploaded = names(s3, run)
    assert "epoch_2.pth" in uploaded and "epoch_2.pth.manifest.json" not in uploaded
    assert s3.fs().cat_file(f"{run}/last_checkpoint") == b"epoch_1.pth"

    # the same machine again: its staged epoch 2 is complete, but the bucket's is not
    os.environ["CADENCE_STAGING_DIR"] = str(staging)
    resumed, counter = train_counting(toy_config(run, 3, resume=True))
    assert counter.iters == 2 * 4
    text = log_text(resumed)
    assert f"Resumed from {os.path.join(resumed.work_dir, 'epoch_1.pth')}" in text
    assert f"Ignoring {run}/epoch_2.pth: it has no manifest" in text
    assert {"epoch_2.pth.manifest.json", "epoch_3.pth.manifest.json"} <= set(names(s3, run))
    assert s3.fs().cat_file(f"{run}/last_checkpoint") == b"epoch_3.pth"


def test_a_damaged_checkpoint_in_the_bucket_falls_back_to_the_previous_one(tmp_path, s3):
    run = s3.bucket() + "/run"
    train_counting(toy_config(run, 2))
    fs = s3.fs()
    data = bytearray(fs.cat_file(f"{run}/epoch_2.pth"))
    data[len(data) // 2] ^= 0xFF
    fs.pipe_file(f"{run}/epoch_2.pth", bytes(data))
    os.environ["CADENCE_STAGING_DIR"] = str(tmp_path / "machine_b")
    resumed, counter = train_counting(toy_config(run, 2, resume=True))
    text = log_text(resumed)
    assert "Skipping checkpoint" in text and "epoch_2.pth" in text and "corrupted" in text
    assert f"Resumed from {os.path.join(resumed.work_dir, 'epoch_1.pth')}" in text
    assert counter.iters == 4


@pytest.mark.parametrize("async_save", [False, True])
def test_rotation_deletes_old_checkpoints_in_the_bucket_too(tmp_path, s3, async_save):
    run = s3.bucket() + "/run"
    checkpoint = dict(type="CheckpointHook", interval=1, max_keep_ckpts=1, async_save=async_save)
    runner, _ = train_counting(toy_config(run, 3, default_hooks=dict(checkpoint=checkpoint)))
    remote = [n for n in names(s3, run) if n.startswith("epoch_")]
    assert remote == ["epoch_3.pth", "epoch_3.pth.manifest.json"]
    assert sorted(n for n in os.listdir(runner.work_dir) if n.startswith("epoch_")) == remote
    # rotation keeps working after a resume on another machine
    os.environ["CADENCE_STAGING_DIR"] = str(tmp_path / "machine_b")
    train_counting(toy_config(run, 4, resume=True, default_hooks=dict(checkpoint=checkpoint)))
    remote = [n for n in names(s3, run) if n.startswith("epoch_")]
    assert remote == ["epoch_4.pth", "epoch_4.pth.manifest.json"]


def test_load_from_a_url_downloads_and_verifies(tmp_path, s3):
    run = s3.bucket() + "/run"
    trained, _ = train_counting(toy_config(run, 1))
    os.environ["CADENCE_STAGING_DIR"] = str(tmp_path / "machine_b")
    runner = Runner.from_cfg(toy_config(tmp_path / "fresh", 1, load_from=f"{run}/epoch_1.pth"))
    staged = runner.paths.load_from
    assert runner.model is not None  # built: weights can be loaded into it
    runner.load_checkpoint(staged)
    assert staged.startswith(staging_root()) and os.path.isfile(manifest_path(staged))
    got = runner.model.state_dict()
    expected = weights(os.path.join(trained.work_dir, "epoch_1.pth"))
    assert all(torch.equal(got[k], expected[k]) for k in expected)


def test_an_out_dir_in_a_bucket_with_a_local_work_dir(tmp_path, s3):
    bucket = s3.bucket()
    hooks = dict(checkpoint=dict(type="CheckpointHook", interval=1, out_dir=bucket + "/ckpts"))
    train_counting(toy_config(tmp_path / "work", 2, default_hooks=hooks))
    assert {"epoch_1.pth", "epoch_2.pth.manifest.json"} <= set(names(s3, bucket + "/ckpts/work"))
    pointer = (tmp_path / "work" / "last_checkpoint").read_text()
    assert pointer == f"{bucket}/ckpts/work/epoch_2.pth"  # where any machine finds it
    os.environ["CADENCE_STAGING_DIR"] = str(tmp_path / "machine_b")
    resumed, counter = train_counting(
        toy_config(tmp_path / "work", 3, resume=True, default_hooks=hooks)
    )
    assert counter.iters == 4 and "Resumed from" in log_text(resumed)


def test_storage_options_come_from_backend_args(tmp_path, s3, monkeypatch):
    monkeypatch.delenv("AWS_ENDPOINT_URL")
    run = s3.bucket() + "/run"
    options = dict(endpoint_url=s3.endpoint, key="testing", secret="testing")
    train_counting(toy_config(run, 1, backend_args=options))
    assert "epoch_1.pth.manifest.json" in names(s3, run)
    storage = RemoteStorage(options)
    assert storage.remote(storage.local(f"{run}/epoch_1.pth")) == f"{run}/epoch_1.pth"


@pytest.mark.dist
def test_sharded_fsdp_checkpoints_go_to_the_bucket_and_resume_exactly(tmp_path, s3):
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "strategies"))
    import dist_cases

    from cadence.dist.testing import run_distributed

    run = s3.bucket() + "/run"
    machine_a = {**s3.env, "CADENCE_STAGING_DIR": str(tmp_path / "machine_a")}
    machine_b = {**s3.env, "CADENCE_STAGING_DIR": str(tmp_path / "machine_b")}
    full = run_distributed(dist_cases.train_fsdp_in, machine_a, str(tmp_path / "local"), 3,
                           timeout=180)  # fmt: skip
    run_distributed(dist_cases.train_fsdp_in, machine_a, run, 2, timeout=180)
    shards = [p for p in s3.fs().find(run) if ".pth.dcp/" in p and "epoch_2" in p]
    assert any(p.endswith(".metadata") for p in shards) and len(shards) >= 3, shards
    resumed = run_distributed(dist_cases.train_fsdp_in, machine_b, run, 3, True, timeout=180)
    assert resumed[0]["losses"] == full[0]["losses"][-len(resumed[0]["losses"]) :]
    for key in full[0]["params"]:
        assert (full[0]["params"][key] == resumed[0]["params"][key]).all(), key


def test_cli_plot_reads_a_run_in_the_bucket(tmp_path, s3, capsys):
    from cadence.cli import main

    run = s3.bucket() + "/run"
    hooks = dict(logger=dict(type="LoggerHook", interval=1))
    train_counting(toy_config(run, 1, default_hooks=hooks))
    os.environ["CADENCE_STAGING_DIR"] = str(tmp_path / "machine_b")
    out = tmp_path / "curves.png"
    assert main(["plot", run, "--out", str(out)]) == 0
    assert out.is_file() and "1 runs" in capsys.readouterr().out
