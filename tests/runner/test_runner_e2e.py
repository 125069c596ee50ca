"""End to end: an OpenMMLab-style config trains, validates, tests, logs and checkpoints."""

from __future__ import annotations

import json
import os

import pytest
import torch

from cadence.config import Config
from cadence.hooks import Hook
from cadence.loops import EpochBasedTrainLoop
from cadence.registry import HOOKS, LOOPS
from cadence.runner import Runner


class StageCounter(Hook):
    """Counts the stages it sees (a user's custom hook, registered by name)."""

    priority = "LOW"

    def __init__(self, tag: str = "x") -> None:
        self.tag = tag
        self.seen: dict[str, int] = {}

    def _count(self, stage: str) -> None:
        self.seen[stage] = self.seen.get(stage, 0) + 1

    def before_train_epoch(self, runner):
        self._count("before_train_epoch")

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self._count("after_train_iter")

    def after_val_epoch(self, runner, metrics=None):
        self._count("after_val_epoch")
        self.seen.setdefault("val_epochs", []).append(runner.epoch)


class CountingEpochLoop(EpochBasedTrainLoop):
    """A user's custom loop: an epoch loop that counts its epochs."""

    def run_epoch(self) -> None:
        self.runner.message_hub.update_info("custom_loop_epochs", self.epoch + 1)
        super().run_epoch()


def experiment(tmp_path, **overrides):
    cfg = dict(
        model=dict(type="ToyClassifier", hidden=32),
        work_dir=str(tmp_path / "work"),
        train_dataloader=dict(
            batch_size=32,
            num_workers=0,
            dataset=dict(type="Blobs", n=512, seed=0),
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        val_dataloader=dict(
            batch_size=64,
            dataset=dict(type="Blobs", n=200, seed=1),
            sampler=dict(type="DefaultSampler", shuffle=False),
            collate_fn=dict(type="default_collate"),
        ),
        test_dataloader=dict(
            batch_size=64,
            dataset=dict(type="Blobs", n=150, seed=2),
            sampler=dict(type="DefaultSampler", shuffle=False),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(type="CountingEpochLoop", max_epochs=6, val_begin=2, val_interval=2),
        val_cfg=dict(),
        test_cfg=dict(),
        val_evaluator=dict(type="Accuracy", topk=(1,)),
        test_evaluator=[dict(type="Accuracy", topk=(1, 2))],
        optim_wrapper=dict(
            type="OptimWrapper",
            optimizer=dict(type="SGD", lr=0.1, momentum=0.9, weight_decay=1e-4),
            clip_grad=dict(max_norm=5.0),
            paramwise_cfg=dict(custom_keys={"head": dict(lr_mult=2.0)}, norm_decay_mult=0.0),
        ),
        param_scheduler=[
            dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=10),
            dict(type="MultiStepLR", milestones=[4], gamma=0.1, by_epoch=True),
        ],
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=5),
            checkpoint=dict(
                type="CheckpointHook", interval=2, max_keep_ckpts=2, save_best="accuracy/top1"
            ),
        ),
        custom_hooks=[dict(type="StageCounter", tag="mine")],
        randomness=dict(seed=7),
        extra_key_for_users=dict(anything=1),
    )
    cfg.update(overrides)
    return Config(cfg)


@pytest.fixture(autouse=True)
def _register_custom_parts():
    HOOKS.register_module(module=StageCounter, force=True)
    LOOPS.register_module(module=CountingEpochLoop, force=True)


def test_config_trains_validates_tests_logs_and_checkpoints(tmp_path):
    runner = Runner.from_cfg(experiment(tmp_path))
    assert runner.cfg.extra_key_for_users.anything == 1
    model = runner.train()
    assert model is runner.model
    counter = next(h for h in runner.hooks if isinstance(h, StageCounter))
    assert counter.tag == "mine"
    assert counter.seen["before_train_epoch"] == 6
    assert counter.seen["after_train_iter"] == 6 * (512 // 32)
    assert counter.seen["val_epochs"] == [2, 4, 6]  # validation runs after the epoch counter moves
    assert runner.message_hub.get_info("custom_loop_epochs") == 6
    assert runner.epoch == 6 and runner.iter == 6 * 16

    val_metrics = runner.val()
    assert val_metrics["accuracy/top1"] >= 90.0
    test_metrics = runner.test()
    assert test_metrics["accuracy/top1"] >= 90.0
    assert test_metrics["accuracy/top2"] >= test_metrics["accuracy/top1"]

    work = tmp_path / "work"
    kept = sorted(p.name for p in work.glob("epoch_*.pth"))
    assert kept == ["epoch_4.pth", "epoch_6.pth"]  # interval 2, keep 2
    assert list(work.glob("best_accuracy_top1_*.pth"))
    assert (work / "last_checkpoint").read_text().endswith("epoch_6.pth")
    log_files = list(work.glob("*/*.log"))
    assert log_files and "Epoch(train)" in log_files[0].read_text()
    scalars = list(work.glob("*/vis_data/scalars.json"))
    assert scalars
    lines = [json.loads(line) for line in scalars[0].read_text().splitlines()]
    assert any("loss" in line for line in lines)
    assert any("accuracy/top1" in line for line in lines)


def test_lr_follows_warmup_then_steps(tmp_path):
    runner = Runner.from_cfg(
        experiment(tmp_path, val_cfg=None, val_dataloader=None, val_evaluator=None, custom_hooks=[])
    )
    seen: list[float] = []

    class LrProbe(Hook):
        def before_train_iter(self, runner, batch_idx, data_batch=None):
            seen.append(runner.optim_wrapper.param_groups[0]["lr"])

    runner.register_hook(LrProbe())
    runner.train()
    base = 0.1
    # linear warm-up from 0.1x reaching 1x at the last step of [0, 10) (mmengine's
    # LinearLR), then x0.1 once epoch 4 is done (16 iterations per epoch)
    for i in range(10):
        assert seen[i] == pytest.approx(base * (0.1 + 0.9 * i / 9))
    assert seen[10] == pytest.approx(base)
    assert seen[4 * 16] == pytest.approx(base * 0.1)
    head_group_lrs = {g["lr"] for g in runner.optim_wrapper.param_groups}
    assert len(head_group_lrs) == 2  # head lr_mult=2


def test_triples_must_be_complete(tmp_path):
    with pytest.raises(ValueError, match="val_evaluator"):
        Runner.from_cfg(experiment(tmp_path, val_evaluator=None))


def test_misspelled_runner_key_warns_with_suggestion(tmp_path):
    cfg = experiment(tmp_path)
    cfg.train_dataloder = cfg.train_dataloader
    with pytest.warns(UserWarning, match="train_dataloader"):
        Runner.from_cfg(cfg)


def test_runner_is_lazy(tmp_path):
    """Construction builds the cheap parts only and writes nothing: no log folder, model,
    loops, checkpoints or config dump (those come with the first train/val/test, whose
    log file then starts with what was logged before)."""
    runner = Runner.from_cfg(experiment(tmp_path))
    assert (
        runner.trained.model is None and runner._train_loop is None and not runner.processes.ready
    )
    runner.logger.warning("logged before the run started")
    work = tmp_path / "work"
    assert not work.exists()
    runner.train()
    log = (work / runner.timestamp / f"{runner.timestamp}.log").read_text()
    assert log.index("logged before the run started") < log.index("PyTorch")


def test_resume_continues_from_checkpoint(tmp_path):
    cfg = experiment(
        tmp_path, train_cfg=dict(type="EpochBasedTrainLoop", max_epochs=4, val_interval=10)
    )
    full = Runner.from_cfg(cfg)
    full.train()
    reference = {k: v.clone() for k, v in full.model.state_dict().items()}

    part_cfg = experiment(
        tmp_path / "b", train_cfg=dict(type="EpochBasedTrainLoop", max_epochs=2, val_interval=10)
    )
    Runner.from_cfg(part_cfg).train()
    resumed_cfg = experiment(
        tmp_path / "b",
        train_cfg=dict(type="EpochBasedTrainLoop", max_epochs=4, val_interval=10),
        resume=True,
    )
    resumed = Runner.from_cfg(resumed_cfg)
    resumed.train()
    assert resumed.epoch == 4
    for key, value in resumed.model.state_dict().items():
        assert torch.equal(value, reference[key]), key


def test_load_from_strips_module_prefix(tmp_path):
    runner = Runner.from_cfg(experiment(tmp_path, train_cfg=dict(max_epochs=1)))
    runner.train()
    state = {f"module.{k}": v for k, v in runner.model.state_dict().items()}
    path = tmp_path / "ddp_style.pth"
    torch.save({"state_dict": state}, path)
    fresh = Runner.from_cfg(experiment(tmp_path / "c", load_from=str(path)))
    metrics = fresh.test()
    assert metrics["accuracy/top1"] >= 90.0
    assert os.path.exists(path)
