"""The run's checkpoints: layout, save order, auto-resume fallback, async save, publishing."""

from __future__ import annotations

import hashlib
import os
import random
import threading
import zipfile

import numpy as np
import pytest
import torch
from runner_toys import log_text, train_counting
from torch import nn

from cadence.checkpoint import atomic_torch_save, manifest_path, safe_torch_load, verify_checkpoint
from cadence.checkpoint import manager as checkpoint_manager
from cadence.checkpoint.unpickling import mmengine_globals
from cadence.config import Config
from cadence.hooks import Hook
from cadence.runner import (
    CheckpointError,
    Runner,
    find_latest_checkpoint,
    load_checkpoint,
    publish_checkpoint,
)


def cfg(tmp_path, max_epochs=2, **overrides):
    c = dict(
        model=dict(type="ToyClassifier"),
        work_dir=str(tmp_path / "work"),
        train_dataloader=dict(
            batch_size=16,
            dataset=dict(type="Blobs", n=64, seed=0),
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(by_epoch=True, max_epochs=max_epochs),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.05, momentum=0.9)),
        param_scheduler=[dict(type="MultiStepLR", milestones=[1], gamma=0.5, by_epoch=True)],
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)),
        randomness=dict(seed=3),
    )
    c.update(overrides)
    return Config(c)


train = train_counting


def flip_a_byte(path):
    """Flip a byte inside the largest record (tensor data) of a checkpoint."""
    with zipfile.ZipFile(path) as archive:
        entry = max(archive.infolist(), key=lambda e: e.file_size)
        content = archive.read(entry)
    data = open(path, "rb").read()
    at = data.index(content) + len(content) // 2
    with open(path, "r+b") as f:
        f.seek(at)
        f.write(bytes([data[at] ^ 0xFF]))


def test_checkpoint_layout_loads_weights_only_with_every_part(tmp_path):
    runner, _ = train(cfg(tmp_path))
    path = os.path.join(runner.work_dir, "epoch_2.pth")
    # weights-only, allowing what mmengine's checkpoints name too (docs/migrating_from_mmengine.md)
    with torch.serialization.safe_globals(mmengine_globals()):
        ckpt = torch.load(path, weights_only=True)
    assert set(ckpt) >= {"state_dict", "optimizer", "param_schedulers", "meta", "message_hub",
                         "hooks", "loops", "rng"}  # fmt: skip
    meta = ckpt["meta"]
    assert (meta["epoch"], meta["iter"], meta["seed"], meta["world_size"]) == (2, 8, 3, 1)
    assert meta["torch_version"] == torch.__version__ and meta["cadence_version"]
    assert meta["cfg"] == runner.cfg.pretty_text and "ToyClassifier" in meta["cfg"]
    assert ckpt["loops"]["train"]["epoch"] == 2
    assert ckpt["rng"]["world_size"] == 1 and len(ckpt["rng"]["ranks"]) == 1
    assert set(ckpt["rng"]["ranks"][0]) >= {"python", "numpy", "torch"}
    for key, value in runner.model.state_dict().items():
        assert torch.equal(ckpt["state_dict"][key], value), key
    assert verify_checkpoint(path)["file"] == "epoch_2.pth"
    assert find_latest_checkpoint(runner.work_dir) == path


def test_pointer_moves_after_the_file_is_in_place_and_rotation_comes_last(tmp_path, monkeypatch):
    events = []
    real_pointer = checkpoint_manager.write_last_checkpoint
    real_remove = checkpoint_manager.remove_checkpoint

    def pointer(work_dir, path, name="last_checkpoint", outside=None):
        events.append(("pointer", os.path.basename(path), verify_checkpoint(path) is not None))
        real_pointer(work_dir, path, name, outside)

    def remove(path):
        latest = find_latest_checkpoint(os.path.dirname(path))
        events.append(("remove", os.path.basename(path), os.path.basename(latest)))
        real_remove(path)

    monkeypatch.setattr(checkpoint_manager, "write_last_checkpoint", pointer)
    monkeypatch.setattr(checkpoint_manager, "remove_checkpoint", remove)
    hooks = dict(checkpoint=dict(type="CheckpointHook", interval=1, max_keep_ckpts=1))
    runner, _ = train(cfg(tmp_path, max_epochs=3, default_hooks=hooks))
    assert events == [
        ("pointer", "epoch_1.pth", True),
        ("pointer", "epoch_2.pth", True),
        ("remove", "epoch_1.pth", "epoch_2.pth"),
        ("pointer", "epoch_3.pth", True),
        ("remove", "epoch_2.pth", "epoch_3.pth"),
    ]
    names = sorted(os.listdir(runner.work_dir))
    assert "epoch_3.pth" in names and "epoch_2.pth" not in names
    assert "epoch_2.pth.manifest.json" not in names


def test_auto_resume_skips_a_corrupted_checkpoint_and_says_why(tmp_path):
    train(cfg(tmp_path, max_epochs=3))
    work = tmp_path / "work"
    flip_a_byte(str(work / "epoch_3.pth"))
    resumed, counter = train(cfg(tmp_path, max_epochs=3, resume=True))
    assert counter.iters == 4  # continued from epoch_2: one epoch of 4 iterations
    text = log_text(resumed)
    assert "Skipping checkpoint" in text and "epoch_3.pth' is corrupted" in text
    assert "newest valid checkpoint" in text and "epoch_2.pth" in text


def test_auto_resume_skips_a_checkpoint_whose_companion_folder_was_tampered_with(tmp_path):
    train(cfg(tmp_path, max_epochs=3))
    work = tmp_path / "work"
    os.makedirs(work / "epoch_3.pth.dcp")
    (work / "epoch_3.pth.dcp" / ".metadata").write_bytes(b"planted")  # not in the manifest
    resumed, counter = train(cfg(tmp_path, max_epochs=3, resume=True))
    assert counter.iters == 4  # continued from epoch_2
    text = log_text(resumed)
    assert "epoch_3.pth': its companion folder holds epoch_3.pth.dcp/.metadata" in text


def test_save_checkpoint_to_a_url_writes_locally_then_uploads(tmp_path, monkeypatch):
    import fsspec

    monkeypatch.setenv("CADENCE_STAGING_DIR", str(tmp_path / "staging"))
    runner, _ = train(cfg(tmp_path, max_epochs=1))
    url = f"memory://ckpts-{os.getpid()}-{id(runner)}"
    path = runner.save_checkpoint(url, "x.pth", backend_args=dict(backend="fsspec"))
    assert path.startswith(str(tmp_path / "staging")) and verify_checkpoint(path) is not None
    fs = fsspec.filesystem("memory")
    assert fs.cat_file(f"{url}/x.pth") == open(path, "rb").read()
    assert fs.exists(f"{url}/x.pth.manifest.json")
    pointer = open(os.path.join(runner.work_dir, "last_checkpoint")).read()
    assert pointer == f"{url}/x.pth"  # the URL: another machine finds it too


def test_auto_resume_follows_older_checkpoints_when_the_pointer_target_is_gone(tmp_path):
    train(cfg(tmp_path, max_epochs=2))
    work = tmp_path / "work"
    os.remove(work / "epoch_2.pth")
    _, counter = train(cfg(tmp_path, max_epochs=2, resume=True))
    assert counter.iters == 4


def test_auto_resume_with_no_valid_checkpoint_raises(tmp_path):
    train(cfg(tmp_path, max_epochs=2))
    work = tmp_path / "work"
    for name in ("epoch_1.pth", "epoch_2.pth"):
        with open(work / name, "r+b") as f:
            f.truncate(100)
    with pytest.raises(CheckpointError, match="none of the checkpoints"):
        train(cfg(tmp_path, max_epochs=2, resume=True))


def test_an_explicit_resume_path_that_is_corrupted_raises(tmp_path):
    train(cfg(tmp_path, max_epochs=1))
    path = str(tmp_path / "work" / "epoch_1.pth")
    flip_a_byte(path)
    with pytest.raises(CheckpointError, match="epoch_1.pth' is corrupted"):
        train(cfg(tmp_path, max_epochs=2, resume=path))


def test_rng_streams_are_restored_on_resume(tmp_path):
    runner, _ = train(cfg(tmp_path, max_epochs=1))
    path = runner.save_checkpoint(runner.work_dir, "rng.pth")
    expected = (random.random(), np.random.rand(), torch.rand(3))
    random.seed(99), np.random.seed(99), torch.manual_seed(99)
    runner.resume(path)
    got = (random.random(), np.random.rand(), torch.rand(3))
    assert got[:2] == expected[:2] and torch.equal(got[2], expected[2])


def test_async_save_writes_the_same_checkpoints_as_sync(tmp_path):
    sync_runner, _ = train(cfg(tmp_path / "sync", max_epochs=2))
    hooks = dict(checkpoint=dict(type="CheckpointHook", interval=1, async_save=True))
    async_runner, _ = train(cfg(tmp_path / "async", max_epochs=2, default_hooks=hooks))
    for name in ("epoch_1.pth", "epoch_2.pth"):
        a = safe_torch_load(os.path.join(sync_runner.work_dir, name))
        b = safe_torch_load(os.path.join(async_runner.work_dir, name))
        verify_checkpoint(os.path.join(async_runner.work_dir, name))
        for key, value in a["state_dict"].items():
            assert torch.equal(b["state_dict"][key], value), key
        assert a["optimizer"]["param_groups"] == b["optimizer"]["param_groups"]
        assert a["loops"] == b["loops"]
    latest = find_latest_checkpoint(async_runner.work_dir)
    assert latest is not None and latest.endswith("epoch_2.pth")


def test_async_save_snapshots_the_state_before_training_moves_on(tmp_path, monkeypatch):
    runner, _ = train(cfg(tmp_path, max_epochs=1))
    before = {k: v.clone() for k, v in runner.model.state_dict().items()}
    release = threading.Event()
    real_write = checkpoint_manager.atomic_torch_save

    def slow_write(state, filename, *args, **kwargs):
        release.wait(10)
        return real_write(state, filename, *args, **kwargs)

    monkeypatch.setattr(checkpoint_manager, "atomic_torch_save", slow_write)
    path = runner.save_checkpoint(runner.work_dir, "snap.pth", async_=True)
    with torch.no_grad():
        for p in runner.model.parameters():
            p.add_(1.0)  # training goes on while the file is being written
    assert not os.path.exists(path)
    release.set()
    runner.wait_for_checkpoint()
    saved = safe_torch_load(path)["state_dict"]
    for key, value in before.items():
        assert torch.equal(saved[key], value), key
    assert find_latest_checkpoint(runner.work_dir) == path


def test_async_write_error_is_raised_at_the_next_save_and_at_the_end(tmp_path, monkeypatch):
    runner, _ = train(cfg(tmp_path, max_epochs=1))

    def broken(state, filename, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_manager, "atomic_torch_save", broken)
    runner.save_checkpoint(runner.work_dir, "a.pth", async_=True)
    with pytest.raises(CheckpointError, match="a.pth in the background failed.*disk full"):
        runner.save_checkpoint(runner.work_dir, "b.pth", async_=True)
    assert not os.path.exists(os.path.join(runner.work_dir, "b.pth"))  # that save stopped
    runner.save_checkpoint(runner.work_dir, "c.pth", async_=True)
    with pytest.raises(CheckpointError, match="c.pth in the background failed"):
        runner.wait_for_checkpoint()
    runner.wait_for_checkpoint()  # reported once
    assert find_latest_checkpoint(runner.work_dir).endswith("epoch_1.pth")


def test_async_hook_error_surfaces_when_training_ends(tmp_path, monkeypatch):
    def broken(state, filename, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_manager, "atomic_torch_save", broken)
    hooks = dict(checkpoint=dict(type="CheckpointHook", interval=-1, async_save=True))
    with pytest.raises(CheckpointError, match="epoch_1.pth in the background failed"):
        train(cfg(tmp_path, max_epochs=1, default_hooks=hooks))


def test_publish_strips_everything_but_the_keys_and_names_the_hash(tmp_path):
    runner, _ = train(cfg(tmp_path, max_epochs=1))
    src = os.path.join(runner.work_dir, "epoch_1.pth")
    out = publish_checkpoint(src, str(tmp_path / "pub" / "model.pth"))
    data = open(out, "rb").read()
    assert os.path.basename(out) == f"model-{hashlib.sha256(data).hexdigest()[:8]}.pth"
    published = torch.load(out, weights_only=True)
    assert set(published) == {"meta", "state_dict"}
    only_weights = publish_checkpoint(src, str(tmp_path / "w"), keys=["state_dict"])
    assert os.path.basename(only_weights).startswith("w-") and only_weights.endswith(".pth")
    assert set(torch.load(only_weights, weights_only=True)) == {"state_dict"}
    again = publish_checkpoint(src, str(tmp_path / "pub" / "model.pth"))
    assert again == out  # the same content gets the same name


def test_load_checkpoint_revises_keys_and_returns_the_checkpoint(tmp_path):
    model = nn.Sequential(nn.Linear(3, 2))
    wrapped = {f"module.{k}": v + 1 for k, v in model.state_dict().items()}
    path = str(tmp_path / "ddp.pth")
    atomic_torch_save({"state_dict": wrapped, "meta": {"epoch": 1}}, path)
    target = nn.Sequential(nn.Linear(3, 2))
    ckpt = load_checkpoint(target, path, strict=True)
    assert ckpt["meta"] == {"epoch": 1}
    for key, value in target.state_dict().items():
        assert torch.equal(value, wrapped[f"module.{key}"])
    assert os.path.isfile(manifest_path(path))


class SaveAsyncThenMaybeFail(Hook):
    """Saves once in the background at the last iteration, the write held back a moment,
    and optionally raises right after: the run must not end before the file is whole."""

    def __init__(self, fail, monkeypatch):
        self.fail = fail
        self.monkeypatch = monkeypatch
        self.path = None

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 != runner.max_iters:
            return
        real_write = checkpoint_manager.atomic_torch_save

        def slow_write(state, filename, *args, **kwargs):
            threading.Event().wait(0.5)
            return real_write(state, filename, *args, **kwargs)

        self.monkeypatch.setattr(checkpoint_manager, "atomic_torch_save", slow_write)
        self.path = runner.save_checkpoint(runner.work_dir, "direct.pth", async_=True)
        if self.fail:
            raise RuntimeError("crash after an async save")


@pytest.mark.parametrize("fail", [False, True])
def test_run_ends_only_after_a_direct_async_save_is_written(tmp_path, fail, monkeypatch):
    hook = SaveAsyncThenMaybeFail(fail, monkeypatch)
    runner = Runner.from_cfg(cfg(tmp_path, max_epochs=1, default_hooks=dict(checkpoint=None)))
    runner.register_hook(hook)
    if fail:
        with pytest.raises(RuntimeError, match="crash after an async save"):
            runner.train()
    else:
        runner.train()
    assert hook.path is not None and os.path.isfile(hook.path)
    verify_checkpoint(hook.path)
    assert find_latest_checkpoint(runner.work_dir) == hook.path
