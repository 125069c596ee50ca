"""After-validation files (cadence/checkpoint/after_val.py): written once the validation
that followed a checkpoint has finished, rotated and replaced with their checkpoint,
uploaded with it, never a checkpoint of their own; one that does not verify, that would
run code or that belongs to another file of that name is not used (the resume validates
again, with a warning)."""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest
from runner_toys import register_toys, toy_config

from cadence.checkpoint import atomic_torch_save, checkpoint_candidates
from cadence.checkpoint.pointer import held_checkpoints
from cadence.dist.testing import run_distributed
from cadence.hooks import Hook
from cadence.runner import Runner


class CountVals(Hook):
    """The epochs after which a run validated, and its final weights (plain lists)."""

    def __init__(self) -> None:
        self.epochs: list[int] = []
        self.weights: dict[str, Any] = {}

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self.epochs.append(runner.epoch)

    def after_train(self, runner: Any) -> None:
        state = runner.strategy.model_state_dict(runner.model)
        self.weights = {k: v.tolist() for k, v in state.items()}


def config(work_dir: Any, epochs: int, hook: dict[str, Any] | None = None, **overrides: Any) -> Any:
    """A checkpoint and a validation each epoch, the best checkpoint kept (``hook``: more
    CheckpointHook arguments)."""
    loader = dict(batch_size=16, dataset=dict(type="Blobs", n=32, seed=1),
                  sampler=dict(type="DefaultSampler", shuffle=False),
                  collate_fn=dict(type="default_collate"))  # fmt: skip
    checkpoint = dict(type="CheckpointHook", interval=1, save_best="auto", **(hook or {}))
    return toy_config(
        work_dir, epochs, default_hooks=dict(checkpoint=checkpoint), val_dataloader=loader,
        val_cfg=dict(), val_evaluator=dict(type="Accuracy"), **overrides,
    )  # fmt: skip


def train(cfg: Any) -> tuple[Runner, CountVals]:
    runner = Runner.from_cfg(cfg)
    vals = CountVals()
    runner.register_hook(vals)
    runner.train()
    return runner, vals


def files(folder: Any) -> list[str]:
    return sorted(n for n in os.listdir(folder) if not n.startswith(".") and ".pth" in n)


@pytest.mark.parametrize("async_save", [False, True])
def test_each_kept_checkpoint_has_its_after_validation_file_and_resumes_without_validating(
    tmp_path, async_save
):
    train(config(tmp_path, 2, dict(max_keep_ckpts=1, async_save=async_save)))
    assert [n for n in files(tmp_path) if not n.startswith("best_")] == [
        "epoch_2.pth", "epoch_2.pth.after_val", "epoch_2.pth.after_val.manifest.json",
        "epoch_2.pth.manifest.json",
    ]  # fmt: skip  # epoch 1's went with its checkpoint; best_*: written during validation
    assert not [n for n in files(tmp_path) if n.startswith("best_") and "after_val" in n]
    assert checkpoint_candidates(str(tmp_path)) == [str(tmp_path / "epoch_2.pth")]
    assert "after_val" not in " ".join(held_checkpoints(str(tmp_path)))
    _, vals = train(config(tmp_path, 3, dict(max_keep_ckpts=1, async_save=async_save), resume=True))
    assert vals.epochs == [3]  # epoch 2's validation had run


def test_a_resume_of_a_named_checkpoint_takes_its_after_validation_file(tmp_path):
    train(config(tmp_path, 2))
    _, vals = train(config(tmp_path, 3, resume=str(tmp_path / "epoch_1.pth")))
    assert vals.epochs == [2, 3]  # epoch 1's had run: not again


def test_saving_a_name_again_drops_the_after_validation_file_of_the_file_it_replaces(tmp_path):
    runner, _ = train(config(tmp_path, 1))
    assert os.path.isfile(tmp_path / "epoch_1.pth.after_val")
    runner.save_checkpoint(str(tmp_path), "epoch_1.pth")
    assert not os.path.exists(tmp_path / "epoch_1.pth.after_val")
    assert not os.path.exists(tmp_path / "epoch_1.pth.after_val.manifest.json")


class Payload:
    """Unpickling this would run a command (what a forged file could hold)."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {self.marker}",))


def test_an_after_validation_file_that_would_run_code_is_refused_and_not_run(tmp_path):
    train(config(tmp_path, 2))
    marker = tmp_path / "ran"
    # forged with a manifest that matches it: verification passes, weights-only loading refuses
    atomic_torch_save({"meta": {}, "hooks": Payload(str(marker))},
                      str(tmp_path / "epoch_2.pth.after_val"))  # fmt: skip
    with pytest.warns(UserWarning, match="Not using .*epoch_2.pth.after_val.*refused"):
        _, vals = train(config(tmp_path, 3, resume=True))
    assert not marker.exists()
    assert vals.epochs == [2, 3]  # epoch 2's validation ran again


def test_the_after_validation_file_of_another_checkpoint_is_not_used(tmp_path):
    train(config(tmp_path, 2))
    for suffix in (".after_val", ".after_val.manifest.json"):  # epoch 1's, under epoch 2's name
        shutil.copy(tmp_path / f"epoch_1.pth{suffix}", tmp_path / f"epoch_2.pth{suffix}")
    with pytest.warns(UserWarning, match="Not using .*belongs to another file"):
        _, vals = train(config(tmp_path, 3, resume=True))
    assert vals.epochs == [2, 3]


def test_an_after_validation_file_without_a_manifest_is_not_used(tmp_path):
    train(config(tmp_path, 2))
    os.remove(tmp_path / "epoch_2.pth.after_val.manifest.json")
    with pytest.warns(UserWarning, match="Not using .*no manifest"):
        _, vals = train(config(tmp_path, 3, resume=True))
    assert vals.epochs == [2, 3]


def test_load_from_takes_the_weights_alone(tmp_path):
    train(config(tmp_path / "a", 2))
    _, vals = train(config(tmp_path / "b", 1, load_from=str(tmp_path / "a" / "epoch_2.pth")))
    assert vals.epochs == [1]  # a new run: its own validation, nothing of a's after it


@pytest.mark.slow
@pytest.mark.parametrize("async_save", [False, True])
def test_after_validation_files_go_to_the_bucket_and_rotate_there(tmp_path, s3, async_save):
    run = s3.bucket() + "/run"
    train(config(run, 2, dict(max_keep_ckpts=1, async_save=async_save)))
    fs = s3.fs()  # type: ignore[attr-defined]
    remote = sorted(p.rsplit("/", 1)[-1] for p in fs.ls(run, detail=False))
    assert [n for n in remote if n.startswith("epoch_")] == [
        "epoch_2.pth", "epoch_2.pth.after_val", "epoch_2.pth.after_val.manifest.json",
        "epoch_2.pth.manifest.json",
    ]  # fmt: skip
    os.environ["CADENCE_STAGING_DIR"] = str(tmp_path / "machine_b")  # s3 restores it
    _, vals = train(config(run, 3, dict(max_keep_ckpts=1, async_save=async_save), resume=True))
    assert vals.epochs == [3]


class Interrupted(BaseException):
    """Stands for the job dying (raised past the runner on every rank)."""


class StopBeforeEpoch(Hook):
    def __init__(self, epoch: int) -> None:
        self.epoch = epoch

    def before_train_epoch(self, runner: Any) -> None:
        if runner.epoch == self.epoch:
            raise Interrupted


def ddp_train(work_dir: str, stop_before: int | None, resume: bool) -> dict[str, Any]:
    """One rank's run of the toy config under DDP: its validations and final weights."""
    register_toys()
    cfg = config(work_dir, 2, launcher="pytorch", strategy=dict(type="DDPStrategy"),
                 resume=resume)  # fmt: skip
    runner = Runner.from_cfg(cfg)
    vals = CountVals()
    runner.register_hook(vals)
    if stop_before is not None:
        runner.register_hook(StopBeforeEpoch(stop_before))
        try:
            runner.train()
        except Interrupted:
            pass
    else:
        runner.train()
    return {"vals": vals.epochs, "weights": vals.weights}  # plain values: through a queue


@pytest.mark.dist
def test_every_rank_resumes_without_validating_again_under_ddp(tmp_path):
    full = run_distributed(ddp_train, str(tmp_path / "full"), None, False, timeout=120)
    part = run_distributed(ddp_train, str(tmp_path / "part"), 1, False, timeout=120)
    resumed = run_distributed(ddp_train, str(tmp_path / "part"), None, True, timeout=120)
    for rank in range(2):
        assert part[rank]["vals"] + resumed[rank]["vals"] == full[rank]["vals"] == [1, 2]
        assert full[rank]["weights"] == resumed[rank]["weights"]
