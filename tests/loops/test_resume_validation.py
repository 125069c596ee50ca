"""Resume and the validation that followed the checkpoint: a checkpoint taken just before a
validation (CheckpointHook saves in the after-hooks, as mmengine does) resumes without
validating again once that validation had finished (its after-validation file), and
validates first when the run stopped before or during it; both end as the
uninterrupted run, bit for bit.
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
from typing import Any

import pytest
import torch
from loop_toys import Interrupted, Record, assert_same_weights, config, register_toys, train

from cadence.hooks import Hook
from cadence.runner import Runner


@pytest.fixture(autouse=True)
def _toys() -> None:
    register_toys()


HOOKS = dict(
    logger=dict(type="LoggerHook", progress="off"),
    checkpoint=dict(type="CheckpointHook", interval=1, by_epoch=True, save_best="accuracy/top1",
                    rule="greater"),
)  # fmt: skip
#: what a validation changes: the best checkpoint, a plateau scheduler (which lowers the
#: learning rate after each validation that does not improve), early stopping's memory
EFFECTS: dict[str, Any] = dict(
    default_hooks=HOOKS,
    param_scheduler=[dict(type="ReduceOnPlateauLR", monitor="accuracy/top1", rule="greater",
                          patience=0, factor=0.5)],
    custom_hooks=[dict(type="EarlyStoppingHook", monitor="accuracy/top1", patience=5)],
)  # fmt: skip


class StopInValidation(Hook):
    """Interrupt the run inside the validation after epoch (or iteration) ``position``."""

    priority = "HIGHEST"

    def __init__(self, position: int) -> None:
        self.position = position

    def after_val_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                       outputs: Any = None) -> None:  # fmt: skip
        if (runner.epoch if runner.train_loop_by_epoch else runner.iter) == self.position:
            raise Interrupted


class StopAtTheEnd(Hook):
    """Interrupt the run once its training loop has ended (before ``after_train``)."""

    priority = "HIGHEST"

    def after_train(self, runner: Any) -> None:
        raise Interrupted


def hub_history(runner: Runner) -> dict[str, Any]:
    """Every scalar the message hub keeps, without timings."""
    return {
        key: [torch.as_tensor(part).tolist() for part in buffer.data]
        for key, buffer in runner.message_hub.log_scalars.items()
        if "time" not in key and key != "eta"
    }


def best_weights(runner: Runner) -> dict[str, torch.Tensor]:
    (hook,) = [h for h in runner.hooks if type(h).__name__ == "CheckpointHook"]
    (path,) = hook.best_paths.values()
    return torch.load(path, weights_only=True)["state_dict"]


def interrupted(cfg: dict[str, Any], hook: Hook) -> Record:
    runner = Runner.from_cfg(cfg)
    record = Record()
    runner.register_hook(record)
    runner.register_hook(hook)
    with pytest.raises(Interrupted):
        runner.train()
    return record


def assert_same_end(full: Runner, resumed: Runner) -> None:
    """Weights, learning rates, scalars, best checkpoint and early stopping as one run's."""
    assert_same_weights(full, resumed)
    assert resumed.optim_wrapper.get_lr() == full.optim_wrapper.get_lr()
    assert hub_history(resumed) == hub_history(full)
    for hook, other in zip(full.hooks, resumed.hooks):
        if type(hook).__name__ == "EarlyStoppingHook":
            assert hook.state_dict() == other.state_dict()
        if type(hook).__name__ == "CheckpointHook":
            assert hook.best_scores == other.best_scores
            names = [os.path.basename(p) for p in (hook.best_paths, other.best_paths)
                     for p in p.values()]  # fmt: skip
            assert names[0] == names[1]
    for key, value in best_weights(full).items():
        assert torch.equal(value, best_weights(resumed)[key]), key


def test_a_resume_after_the_validation_finished_does_not_validate_again(tmp_path):
    full, full_rec = train(config(tmp_path / "full", "full", val=True, **EFFECTS))
    assert [v[:2] for v in full_rec.vals] == [(1, 4), (2, 8), (3, 12)]
    assert full.optim_wrapper.get_lr()["lr"][0] < 0.1  # the plateau scheduler acted
    # epoch_2.pth is written before epoch 2's validation; the run dies after it, in epoch 3
    _, part_rec = train(config(tmp_path / "part", "part", val=True, **EFFECTS), stop_before=8)
    assert os.path.isfile(tmp_path / "part" / "epoch_2.pth.after_val")
    resumed, resumed_rec = train(
        config(tmp_path / "part", "resumed", val=True, resume=True, **EFFECTS)
    )
    assert part_rec.vals + resumed_rec.vals == full_rec.vals  # each validation ran once
    assert resumed_rec.losses == full_rec.losses[8:]
    assert torch.equal(full_rec.rng, resumed_rec.rng)
    assert_same_end(full, resumed)


def test_a_resume_after_a_validation_cut_short_runs_it_first(tmp_path):
    full, full_rec = train(config(tmp_path / "full", "full", val=True, **EFFECTS))
    part_rec = interrupted(config(tmp_path / "part", "part", val=True, **EFFECTS),
                           StopInValidation(2))  # fmt: skip
    assert not os.path.exists(tmp_path / "part" / "epoch_2.pth.after_val")
    # resumed: epoch 2's validation runs first; stopped again in epoch 3
    _, again_rec = train(config(tmp_path / "part", "again", val=True, resume=True, **EFFECTS),
                         stop_before=10)  # fmt: skip
    assert os.path.isfile(tmp_path / "part" / "epoch_2.pth.after_val")
    resumed, resumed_rec = train(
        config(tmp_path / "part", "resumed", val=True, resume=True, **EFFECTS)
    )
    assert part_rec.vals + again_rec.vals + resumed_rec.vals == full_rec.vals  # once each
    assert resumed_rec.losses == full_rec.losses[8:]
    assert_same_end(full, resumed)


def test_an_iteration_loop_resumes_without_validating_again(tmp_path):
    overrides = dict(
        train_cfg=dict(type="IterBasedTrainLoop", max_iters=12, val_interval=4),
        default_hooks=dict(logger=dict(type="LoggerHook", progress="off"),
                           checkpoint=dict(type="CheckpointHook", interval=4, by_epoch=False)),
    )  # fmt: skip
    full, full_rec = train(config(tmp_path / "full", "full", val=True, **overrides))
    assert [v[1] for v in full_rec.vals] == [4, 8, 12]
    _, part_rec = train(config(tmp_path / "part", "part", val=True, **overrides), stop_before=6)
    resumed, resumed_rec = train(
        config(tmp_path / "part", "resumed", val=True, resume=True, **overrides)
    )
    assert part_rec.vals + resumed_rec.vals == full_rec.vals  # resumed from iter_4.pth
    assert resumed_rec.losses == full_rec.losses[4:]
    assert_same_weights(full, resumed)
    assert hub_history(resumed) == hub_history(full)


def test_a_validation_that_stopped_the_run_stops_the_resumed_run(tmp_path):
    stopper = dict(custom_hooks=[dict(type="EarlyStoppingHook", monitor="accuracy/top1",
                                      min_delta=100.0, patience=2)])  # fmt: skip
    cfg = dict(train_cfg=dict(by_epoch=True, max_epochs=5), default_hooks=HOOKS, **stopper)
    full, full_rec = train(config(tmp_path / "full", "full", val=True, **cfg))
    assert full.epoch < 5  # early stopping ended it
    interrupted(config(tmp_path / "part", "part", val=True, **cfg), StopAtTheEnd())
    resumed, resumed_rec = train(config(tmp_path / "part", "resumed", val=True, resume=True, **cfg))
    assert resumed_rec.vals == [] and resumed_rec.losses == []
    assert resumed.epoch == full.epoch
    assert_same_weights(full, resumed)


def test_a_tampered_after_validation_file_is_not_used(tmp_path):
    full, full_rec = train(config(tmp_path / "full", "full", val=True, **EFFECTS))
    _, part_rec = train(config(tmp_path / "part", "part", val=True, **EFFECTS), stop_before=8)
    after = tmp_path / "part" / "epoch_2.pth.after_val"
    data = bytearray(after.read_bytes())
    data[len(data) // 2] ^= 0xFF
    after.write_bytes(bytes(data))
    with pytest.warns(UserWarning, match="Not using .*epoch_2.pth.after_val.*corrupted"):
        resumed, resumed_rec = train(
            config(tmp_path / "part", "resumed", val=True, resume=True, **EFFECTS)
        )
    assert resumed_rec.vals == full_rec.vals[1:]  # epoch 2's validation ran again, first
    assert_same_end(full, resumed)


def test_a_checkpoint_without_a_pending_validation_does_not_validate_on_resume(tmp_path):
    overrides = dict(train_cfg=dict(by_epoch=True, max_epochs=3, val_interval=2))
    train(config(tmp_path / "part", "part", val=True, **overrides), stop_before=8)
    _, record = train(config(tmp_path / "part", "resumed", val=True, resume=True, **overrides))
    assert [v[:2] for v in record.vals] == [(2, 8), (3, 12)]  # iter_6.pth: no validation due


def rewrite_as_version_2(path: str) -> None:
    """Replace the manifest of ``path`` by one as cadence wrote it before manifests named
    their algorithm (version 2: the file's ``sha256``, no ``algorithm``)."""
    manifest = path + ".manifest.json"
    with open(manifest) as f:
        new = json.load(f)
    with open(path, "rb") as f:
        sha256 = hashlib.sha256(f.read()).hexdigest()
    old = {k: new[k] for k in ("format", "file", "created", "keys", "progress") if k in new}
    old.update(version=2, size=os.path.getsize(path), sha256=sha256)
    with open(manifest, "w") as f:
        json.dump(old, f)


def test_a_checkpoint_and_after_validation_file_of_version_2_resume_without_validating(tmp_path):
    full, full_rec = train(config(tmp_path / "full", "full", val=True, **EFFECTS))
    _, part_rec = train(config(tmp_path / "part", "part", val=True, **EFFECTS), stop_before=8)
    checkpoint = str(tmp_path / "part" / "epoch_2.pth")
    rewrite_as_version_2(checkpoint)
    after = checkpoint + ".after_val"  # bound as before: {"file", "sha256"}
    state = torch.load(after, weights_only=True)
    with open(checkpoint + ".manifest.json") as f:
        state["meta"] = {"after_val_of": {"file": "epoch_2.pth", "sha256": json.load(f)["sha256"]}}
    torch.save(state, after)
    rewrite_as_version_2(after)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="Not using")
        resumed, resumed_rec = train(
            config(tmp_path / "part", "resumed", val=True, resume=True, **EFFECTS)
        )
    assert part_rec.vals + resumed_rec.vals == full_rec.vals  # epoch 2's validation not again
    assert_same_end(full, resumed)
