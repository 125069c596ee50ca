"""A run deletes only checkpoints of its own work dir (issue 27, item 1).

The same training (interval checkpoints with ``max_keep_ckpts=2``, the best one kept)
is continued from a copy of its work dir, from a moved work dir and, as a new
experiment, from one of its checkpoints in another work dir: the original work dir
must stay byte for byte as it was, and the rotation limits hold where the run writes.
"""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest
from fresh_python import run_python
from runner_toys import toy_config

from cadence.hooks import CheckpointHook
from cadence.resilience.work_dir_lock import EarlierRunError
from cadence.runner import Runner

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER_TESTS = os.path.join(os.path.dirname(HERE), "runner")


def config(work_dir, epochs, by_epoch=True, **overrides):
    """4 iterations an epoch; a checkpoint each epoch (or every 4 iterations), 2 kept, and
    the 2 best by validation accuracy."""
    hook = dict(type="CheckpointHook", interval=1 if by_epoch else 4, by_epoch=by_epoch,
                max_keep_ckpts=2, save_best="auto", max_keep_best=2)  # fmt: skip
    train_cfg = (
        dict(by_epoch=True, max_epochs=epochs, val_interval=1)
        if by_epoch
        else dict(type="IterBasedTrainLoop", max_iters=4 * epochs, val_interval=4)
    )
    loader = dict(batch_size=16, dataset=dict(type="Blobs", n=32, seed=1),
                  sampler=dict(type="DefaultSampler", shuffle=False),
                  collate_fn=dict(type="default_collate"))  # fmt: skip
    return toy_config(
        work_dir, epochs, default_hooks=dict(checkpoint=hook), train_cfg=train_cfg,
        val_dataloader=loader, val_cfg=dict(), val_evaluator=dict(type="Accuracy"), **overrides,
    )  # fmt: skip


def train(work_dir, epochs, by_epoch=True, **overrides):
    runner = Runner.from_cfg(config(work_dir, epochs, by_epoch, **overrides))
    runner.train()
    return runner


def snapshot(folder):
    """Every file under ``folder`` with the SHA-256 of its bytes."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return found


def interval_checkpoints(folder, by_epoch=True):
    prefix = "epoch_" if by_epoch else "iter_"
    return sorted(n for n in os.listdir(folder) if n.startswith(prefix) and n.endswith(".pth"))


def best_checkpoints(folder):
    return sorted(n for n in os.listdir(folder) if n.startswith("best_") and n.endswith(".pth"))


def last(by_epoch, *steps):
    return [f"epoch_{s}.pth" if by_epoch else f"iter_{4 * s}.pth" for s in steps]


@pytest.mark.parametrize("by_epoch", [True, False], ids=["epochs", "iterations"])
def test_a_copied_work_dir_rotates_its_own_files_and_leaves_the_original(tmp_path, by_epoch):
    orig, copy = tmp_path / "orig", tmp_path / "copy"
    train(orig, 4, by_epoch)
    before = snapshot(orig)
    shutil.copytree(orig, copy)
    train(copy, 6, by_epoch, resume=True)
    assert snapshot(orig) == before
    assert interval_checkpoints(copy, by_epoch) == last(by_epoch, 5, 6)
    assert len(best_checkpoints(copy)) == 2


@pytest.mark.parametrize("by_epoch", [True, False], ids=["epochs", "iterations"])
def test_a_new_experiment_from_another_runs_checkpoint_never_touches_that_run(tmp_path, by_epoch):
    orig, new = tmp_path / "orig", tmp_path / "new"
    train(orig, 4, by_epoch)
    before = snapshot(orig)
    source = orig / last(by_epoch, 4)[0]
    runner = train(new, 6, by_epoch, resume=True, load_from=str(source))
    assert snapshot(orig) == before
    assert interval_checkpoints(new, by_epoch) == last(by_epoch, 5, 6)
    assert len(best_checkpoints(new)) <= 2
    hook = next(h for h in runner.hooks if isinstance(h, CheckpointHook))
    assert all(p.startswith(str(new)) for p in hook.kept + list(hook.best_paths.values()))


@pytest.mark.parametrize("by_epoch", [True, False], ids=["epochs", "iterations"])
def test_a_moved_work_dir_keeps_rotating(tmp_path, by_epoch):
    orig, moved = tmp_path / "orig", tmp_path / "moved"
    train(orig, 4, by_epoch)
    os.rename(orig, moved)
    train(moved, 6, by_epoch, resume=True)
    assert interval_checkpoints(moved, by_epoch) == last(by_epoch, 5, 6)
    assert len(best_checkpoints(moved)) == 2


def test_a_state_of_absolute_paths_from_before_is_placed_in_the_moved_folder(tmp_path):
    """Checkpoints of earlier cadence versions name absolute paths of the folder they were
    written in; a resume in a moved folder takes their names (and drops other folders')."""
    moved = tmp_path / "moved"
    runner = Runner.from_cfg(config(moved, 1))
    old = "/elsewhere/orig"
    hook = CheckpointHook(interval=1, max_keep_ckpts=2, save_best="auto")
    hook.load_state_dict({
        "kept": [f"{old}/epoch_3.pth", f"{old}/epoch_4.pth"], "stale": ["/other/epoch_1.pth"],
        "last_ckpt": f"{old}/epoch_4.pth", "best_scores": {"accuracy/top1": 90.0},
        "best_paths": {"accuracy/top1": f"{old}/best_accuracy_top1_epoch_2.pth"},
    })  # fmt: skip
    runner.paths.resumed_from = str(moved / "epoch_4.pth")
    hook.before_train(runner)
    assert hook.kept == [str(moved / "epoch_3.pth"), str(moved / "epoch_4.pth")]
    assert hook.stale == []
    assert hook.best_paths == {"accuracy/top1": str(moved / "best_accuracy_top1_epoch_2.pth")}


def test_the_saved_state_names_files_relative_to_the_work_dir(tmp_path):
    runner = train(tmp_path / "run", 3)
    state = next(h for h in runner.hooks if isinstance(h, CheckpointHook)).state_dict()
    assert state["kept"] == ["epoch_2.pth", "epoch_3.pth"]
    assert state["last_ckpt"] == "epoch_3.pth"
    assert all(not os.path.isabs(p) for p in state["best_paths"].values())


def test_a_fresh_run_refuses_a_work_dir_with_an_earlier_runs_checkpoints(tmp_path):
    work = tmp_path / "run"
    train(work, 2)
    before = snapshot(work)
    with pytest.raises(EarlierRunError, match=r"--resume.*--work-dir.*--overwrite"):
        train(work, 2, randomness=dict(seed=4))
    assert snapshot(work) == before  # not even a log folder or a config dump
    train(work, 2, randomness=dict(seed=4), overwrite=True)
    assert interval_checkpoints(work) == ["epoch_1.pth", "epoch_2.pth"]
    assert snapshot(work)["epoch_2.pth"] != before["epoch_2.pth"]


def cadence_train(tmp_path, cfg, *args):
    (tmp_path / "toys_registered.py").write_text(
        "from runner_toys import register_toys\nregister_toys()\n"
    )
    config_file = tmp_path / "cfg.py"
    config_file.write_text(
        "custom_imports = dict(imports=['toys_registered'], allow_failed_imports=False)\n"
        + "\n".join(f"{k} = {v!r}" for k, v in cfg.to_dict().items())
    )
    path = os.pathsep.join([str(tmp_path), RUNNER_TESTS, os.environ.get("PYTHONPATH", "")])
    return run_python(["-m", "cadence", "train", str(config_file), *args], timeout=180,
                      cwd=tmp_path, env={**os.environ, "PYTHONPATH": path})  # fmt: skip


@pytest.mark.slow
def test_the_cli_scenarios_of_the_issue(tmp_path):
    """``cadence train cfg.py --work-dir copy --resume`` after ``cp -r orig copy``, and
    ``--work-dir new --resume orig/epoch_4.pth``: ``orig`` stays as it was; a second fresh
    run in ``orig`` is refused with exit 2 and writes nothing."""
    orig = tmp_path / "orig"
    done = cadence_train(tmp_path, config(str(orig), 4))
    assert done.returncode == 0, done.stderr
    before = snapshot(orig)
    shutil.copytree(orig, tmp_path / "copy")
    six = config(str(orig), 6)
    done = cadence_train(tmp_path, six, "--work-dir", "copy", "--resume", "train_cfg.max_epochs=6")
    assert done.returncode == 0, done.stderr
    done = cadence_train(tmp_path, six, "--work-dir", "new", "--resume", "orig/epoch_4.pth")
    assert done.returncode == 0, done.stderr
    assert snapshot(orig) == before
    assert (orig / "last_checkpoint").read_text() == "epoch_4.pth"
    assert interval_checkpoints(tmp_path / "copy") == ["epoch_5.pth", "epoch_6.pth"]
    assert interval_checkpoints(tmp_path / "new") == ["epoch_5.pth", "epoch_6.pth"]
    refused = cadence_train(tmp_path, config(str(orig), 4))
    assert refused.returncode == 2, refused.stderr
    assert "earlier run" in refused.stderr and "Traceback" not in refused.stderr
    assert snapshot(orig) == before


def bucket_snapshot(fs, url):
    """Every object under ``url`` with the SHA-256 of its bytes."""
    fs.invalidate_cache()  # the runs wrote through other clients
    return {p[len(url.split("://", 1)[-1]):]: hashlib.sha256(fs.cat_file(p)).hexdigest()
            for p in fs.find(url)}  # fmt: skip


def bucket_names(fs, url, prefix):
    fs.invalidate_cache()
    return sorted(p.rsplit("/", 1)[-1] for p in fs.ls(url, detail=False)
                  if p.rsplit("/", 1)[-1].startswith(prefix) and p.endswith(".pth"))  # fmt: skip


@pytest.mark.slow
def test_bucket_work_dirs_copied_moved_and_resumed_from_elsewhere(tmp_path, s3):
    fs = s3.fs()
    bucket = s3.bucket()
    orig, copy, moved, new = (f"{bucket}/{n}" for n in ("orig", "copy", "moved", "new"))
    train(orig, 3)
    fs.copy(orig, copy, recursive=True)
    before = bucket_snapshot(fs, orig)
    train(copy, 4, resume=True)
    train(new, 4, resume=True, load_from=f"{orig}/epoch_3.pth")
    assert bucket_snapshot(fs, orig) == before
    assert bucket_names(fs, copy, "epoch_") == ["epoch_3.pth", "epoch_4.pth"]
    assert bucket_names(fs, new, "epoch_") == ["epoch_4.pth"]
    fs.invalidate_cache()
    for key in fs.find(copy):  # a move: every object copied, then the prefix removed
        fs.copy(key, key.replace("/copy/", "/moved/", 1))
    fs.rm(copy, recursive=True)
    os.environ["CADENCE_STAGING_DIR"] = str(tmp_path / "machine_b")  # the s3 fixture resets it
    train(moved, 5, resume=True)
    assert bucket_names(fs, moved, "epoch_") == ["epoch_4.pth", "epoch_5.pth"]
    assert len(bucket_names(fs, moved, "best_")) == 2
