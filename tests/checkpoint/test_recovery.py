"""Recovery that follows training progress: damaged disks, copied work dirs, lost manifests."""

from __future__ import annotations

import glob
import os
import shutil
import stat
import time

import pytest
import torch
from damage import flip_a_byte
from fresh_python import run_python
from runner_toys import log_text, toy_config, train_counting

from cadence.checkpoint import (
    CheckpointError,
    atomic_torch_save,
    checkpoint_candidates,
    find_latest_checkpoint,
    manifest_path,
    read_checkpoint,
    read_manifest,
)


def cfg(work_dir, max_epochs=3, **overrides):
    return toy_config(work_dir, max_epochs, **overrides)


train = train_counting


def test_manifest_records_the_training_progress(tmp_path):
    train(cfg(tmp_path / "work", max_epochs=2))
    manifest = read_manifest(str(tmp_path / "work" / "epoch_2.pth"))
    assert manifest["progress"] == {"epoch": 2, "iter": 8}


def test_fallback_follows_progress_not_file_times(tmp_path):
    work = tmp_path / "work"
    train(cfg(work, max_epochs=3))
    copy = tmp_path / "copy"
    shutil.copytree(work, copy)  # cp -r: every file gets a new time, epoch_1 last here
    os.utime(copy / "epoch_1.pth", (time.time() + 100, time.time() + 100))
    os.remove(copy / "last_checkpoint")
    assert [os.path.basename(p) for p in checkpoint_candidates(str(copy))] == [
        "epoch_3.pth", "epoch_2.pth", "epoch_1.pth",
    ]  # fmt: skip
    flip_a_byte(str(copy / "epoch_3.pth"))
    resumed, counter = train(cfg(copy, max_epochs=3, resume=True))
    assert counter.iters == 4  # continued from epoch_2 (the newest sound one), not epoch_1
    assert "Resumed from" in log_text(resumed) and "epoch_2.pth" in log_text(resumed)


def test_a_checkpoint_without_manifest_is_skipped_by_auto_resume(tmp_path):
    work = tmp_path / "work"
    train(cfg(work, max_epochs=3))
    os.remove(manifest_path(str(work / "epoch_3.pth")))
    flip_a_byte(str(work / "epoch_3.pth"))  # damaged, and nothing can tell
    resumed, counter = train(cfg(work, max_epochs=3, resume=True))
    assert counter.iters == 4
    text = log_text(resumed)
    assert "epoch_3.pth" in text and "no manifest" in text and "could not be verified" in text


def test_an_explicit_unverified_file_loads_with_a_warning(tmp_path):
    path = str(tmp_path / "foreign.pth")
    torch.save({"state_dict": {"w": torch.ones(2)}}, path)
    with pytest.warns(UserWarning, match=r"foreign.pth' has no manifest: it could not be verified"):
        assert torch.equal(read_checkpoint(path)["state_dict"]["w"], torch.ones(2))


def test_unverifiable_checkpoints_are_never_overwritten(tmp_path):
    work = tmp_path / "work"
    train(cfg(work, max_epochs=2))
    for manifest in glob.glob(str(work / "*.manifest.json")):
        os.remove(manifest)
    os.remove(work / "epoch_2.pth")  # the pointer now dangles
    before = open(work / "epoch_1.pth", "rb").read()
    with pytest.raises(CheckpointError) as info:
        train(cfg(work, max_epochs=2, resume=True))
    message = str(info.value)
    assert "epoch_1.pth" in message and "could not be verified" in message
    assert "--resume" in message and "--work-dir" in message
    assert open(work / "epoch_1.pth", "rb").read() == before


def test_cli_stops_with_exit_code_2_instead_of_overwriting(tmp_path):
    work = tmp_path / "work"
    train(cfg(work, max_epochs=1))
    os.remove(manifest_path(str(work / "epoch_1.pth")))
    (tmp_path / "toys_registered.py").write_text(
        "from runner_toys import Blobs, ToyClassifier\n"
        "from cadence.registry import DATASETS, MODELS\n"
        "DATASETS.register_module(module=Blobs, force=True)\n"
        "MODELS.register_module(module=ToyClassifier, force=True)\n"
    )
    config = tmp_path / "cfg.py"
    config.write_text(
        "custom_imports = dict(imports=['toys_registered'], allow_failed_imports=False)\n"
        + "\n".join(f"{k} = {v!r}" for k, v in cfg(work, max_epochs=1).to_dict().items())
    )
    runner_tests = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "runner")  # fmt: skip
    path = os.pathsep.join([str(tmp_path), runner_tests, os.environ.get("PYTHONPATH", "")])
    result = run_python(["-m", "cadence", "train", str(config), "--resume"], timeout=120,
                        env={**os.environ, "PYTHONPATH": path})  # fmt: skip
    assert result.returncode == 4, result.stderr  # ExitCode.CHECKPOINT_UNVERIFIABLE
    assert "Traceback" not in result.stderr
    assert "epoch_1.pth" in result.stderr and "--work-dir" in result.stderr


def test_a_garbled_pointer_is_a_checkpoint_error_and_resume_falls_back(tmp_path):
    work = tmp_path / "work"
    train(cfg(work, max_epochs=2))
    (work / "last_checkpoint").write_bytes(b"\xff\xfe\x00garbage\x80")
    with pytest.raises(CheckpointError, match="last_checkpoint"):
        find_latest_checkpoint(str(work))
    resumed, counter = train(cfg(work, max_epochs=3, resume=True))
    assert counter.iters == 4  # from epoch_2
    assert "last_checkpoint" in log_text(resumed)


def test_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path = str(tmp_path / "sub" / "a.pth")
        atomic_torch_save({"w": torch.zeros(1)}, path)
        from cadence.checkpoint.pointer import write_last_checkpoint

        write_last_checkpoint(str(tmp_path), path)
    finally:
        os.umask(old)
    for name in (path, manifest_path(path), str(tmp_path / "last_checkpoint")):
        assert stat.S_IMODE(os.stat(name).st_mode) == 0o644, name
    assert stat.S_IMODE(os.stat(tmp_path / "sub").st_mode) == 0o755


def test_a_full_disk_names_the_file_and_the_space_needed(tmp_path, monkeypatch):
    path = str(tmp_path / "big.pth")

    def full(obj, f, *args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(torch, "save", full)
    with pytest.raises(CheckpointError, match=r"big.pth.*no space left.*needs about 4\.0 MiB"):
        atomic_torch_save({"w": torch.zeros(1 << 20)}, path)
    assert os.listdir(tmp_path) == []


def test_published_weights_carry_a_manifest_and_verify(tmp_path):
    from cadence.checkpoint import publish_checkpoint, verify_checkpoint

    train(cfg(tmp_path / "work", max_epochs=1))
    out = publish_checkpoint(str(tmp_path / "work" / "epoch_1.pth"), str(tmp_path / "m.pth"))
    assert verify_checkpoint(out)["keys"].keys() == {"meta", "state_dict"}
    flip_a_byte(out)
    with pytest.raises(CheckpointError, match="is corrupted"):
        read_checkpoint(out)


def test_a_copied_work_dir_resumes_from_its_own_files(tmp_path):
    work = tmp_path / "work"
    train(cfg(work, max_epochs=2))
    assert (work / "last_checkpoint").read_text() == "epoch_2.pth"  # relative to the work dir
    copy = tmp_path / "copy"
    shutil.copytree(work, copy)
    flip_a_byte(str(work / "epoch_2.pth"))  # the original may change or go away
    resumed, counter = train(cfg(copy, max_epochs=3, resume=True))
    assert counter.iters == 4
    assert f"Resumed from {copy / 'epoch_2.pth'}" in log_text(resumed)
    assert "Skipping" not in log_text(resumed)  # never looked at the original's files
    assert find_latest_checkpoint(str(copy)) == str(copy / "epoch_3.pth")
