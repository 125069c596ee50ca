"""CheckpointHook: mmengine's schedule (interval, save_begin, save_last), out_dir, rotation,
best checkpoints (rules, state across resume) and published files."""

from __future__ import annotations

import os
import re

import pytest
import torch
from hook_toys import Line, Ramp

from cadence.checkpoint import safe_torch_load
from cadence.evaluator import BaseMetric
from cadence.hooks import CheckpointHook, Hook
from cadence.registry import DATASETS, METRICS, MODELS
from cadence.runner import Runner, find_latest_checkpoint

RUNNING: dict = {}
REPORTED: list = []


class ByEpoch(BaseMetric):
    """Reports ``table[epochs trained]`` (the same value whenever an epoch is validated again)."""

    default_prefix = "m"

    def __init__(self, table, key="acc", **kwargs) -> None:
        super().__init__(**kwargs)
        self.table, self.key = dict(table), key

    def process(self, data_batch, data_samples) -> None:
        self.results.extend(0 for _ in data_samples)

    def compute_metrics(self, results):
        REPORTED.append(self.table[RUNNING["runner"].train_loop.epoch])
        return {self.key: REPORTED[-1]}


class Remember(Hook):
    def before_run(self, runner) -> None:
        RUNNING["runner"] = runner


@pytest.fixture(autouse=True)
def _toys():
    REPORTED.clear()
    DATASETS.register_module(module=Ramp, force=True)
    MODELS.register_module(module=Line, force=True)
    METRICS.register_module(module=ByEpoch, force=True)


LOADER = dict(
    batch_size=4,  # one iteration per epoch
    dataset=dict(type="Ramp", n=4),
    sampler=dict(type="DefaultSampler", shuffle=False),
    collate_fn=dict(type="default_collate"),
)


def train(work_dir, hook, epochs=4, table=None, key="acc", **overrides) -> Runner:
    cfg = dict(
        model=dict(type="Line"),
        work_dir=str(work_dir),
        train_dataloader=LOADER,
        train_cfg=dict(max_epochs=epochs),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", **hook)),
        custom_hooks=[Remember()],
    )
    if table is not None:
        cfg.update(
            val_dataloader=LOADER,
            val_cfg=dict(),
            val_evaluator=dict(type="ByEpoch", table=table, key=key),
        )
    cfg.update(overrides)
    runner = Runner(**cfg)
    runner.train()
    return runner


def names(folder, pattern=r".*\.pth$"):
    return sorted(n for n in os.listdir(folder) if re.fullmatch(pattern, n))


def test_save_begin_and_interval_follow_mmengine(tmp_path):
    train(tmp_path, dict(interval=2, save_begin=5), epochs=10)
    # mmengine: epochs save_begin, save_begin + interval, ...; plus the last (save_last)
    expected = [f"epoch_{e}.pth" for e in (5, 7, 9, 10)]
    assert names(tmp_path) == sorted(expected)


def test_iteration_interval_with_save_last_off_and_a_template(tmp_path):
    hook = dict(interval=3, by_epoch=False, save_last=False, filename_tmpl="step{}.pth")
    train(tmp_path, hook, epochs=0, train_cfg=dict(type="IterBasedTrainLoop", max_iters=7))
    assert names(tmp_path) == ["step3.pth", "step6.pth"]


def test_max_keep_ckpts_keeps_the_newest(tmp_path):
    runner = train(tmp_path, dict(interval=1, max_keep_ckpts=2), epochs=5)
    assert names(tmp_path) == ["epoch_4.pth", "epoch_5.pth"]
    assert not [n for n in os.listdir(tmp_path) if n.startswith("epoch_3")]  # manifest too
    hook = next(h for h in runner.hooks if isinstance(h, CheckpointHook))
    assert hook.kept == [str(tmp_path / "epoch_4.pth"), str(tmp_path / "epoch_5.pth")]
    assert runner.message_hub.get_info("last_ckpt") == str(tmp_path / "epoch_5.pth")


def test_out_dir_gets_the_work_dir_name_and_the_pointer_stays_in_the_work_dir(tmp_path):
    work = tmp_path / "exp1"
    train(work, dict(interval=1, out_dir=str(tmp_path / "store")), epochs=2)
    assert names(tmp_path / "store" / "exp1") == ["epoch_1.pth", "epoch_2.pth"]
    assert find_latest_checkpoint(str(work)) == str(tmp_path / "store" / "exp1" / "epoch_2.pth")
    resumed = train(work, dict(interval=1, out_dir=str(tmp_path / "store")), epochs=3, resume=True)
    assert resumed.epoch == 3


def test_best_checkpoint_follows_the_inferred_rule(tmp_path):
    table = {1: 0.5, 2: 0.9, 3: 0.7, 4: 0.8}
    runner = train(tmp_path, dict(interval=-1, save_best="auto"), epochs=4, table=table)
    best = names(tmp_path, r"best_.*\.pth")
    assert best == ["best_m_acc_epoch_2.pth"]
    hook = next(h for h in runner.hooks if isinstance(h, CheckpointHook))
    assert hook.best_scores == {"m/acc": 0.9}
    assert runner.message_hub.get_info("best_score") == 0.9
    assert runner.message_hub.get_info("best_ckpt") == str(tmp_path / best[0])
    ckpt = safe_torch_load(str(tmp_path / best[0]))
    assert "optimizer" not in ckpt and "state_dict" in ckpt


def test_top_k_best_checkpoints_with_scores_in_their_manifests_and_a_best_pointer(tmp_path):
    from cadence.checkpoint import read_manifest

    table = {1: 0.5, 2: 0.9, 3: 0.7, 4: 0.8, 5: 0.6, 6: 0.95}
    hook = dict(interval=-1, save_best="m/acc", max_keep_best=3)
    runner = train(tmp_path / "run", hook, epochs=6, table=table)
    work = tmp_path / "run"
    # epoch 5 (0.6) never entered the top 3; epoch 1 (0.5) and then 3 (0.7) were pushed out
    assert names(work, r"best_.*\.pth") == [
        "best_m_acc_epoch_2.pth", "best_m_acc_epoch_4.pth", "best_m_acc_epoch_6.pth",
    ]  # fmt: skip
    for epoch in (2, 4, 6):
        manifest = read_manifest(str(work / f"best_m_acc_epoch_{epoch}.pth"))
        assert manifest["metrics"] == {"m/acc": table[epoch]}
    best = find_latest_checkpoint(str(work), "best_checkpoint")
    assert best == str(work / "best_m_acc_epoch_6.pth")
    hook_obj = next(h for h in runner.hooks if isinstance(h, CheckpointHook))
    assert [score for score, _ in hook_obj.best_kept["m/acc"]] == [0.95, 0.9, 0.8]
    assert hook_obj.best_scores == {"m/acc": 0.95}


def test_top_k_survives_resume(tmp_path):
    table = {1: 0.5, 2: 0.9, 3: 0.7, 4: 0.8}
    hook = dict(interval=1, save_best="m/acc", max_keep_best=2)
    train(tmp_path, hook, epochs=2, table=table)
    runner = train(tmp_path, hook, epochs=4, table=table, resume=True)
    assert names(tmp_path, r"best_.*\.pth") == ["best_m_acc_epoch_2.pth", "best_m_acc_epoch_4.pth"]
    hook_obj = next(h for h in runner.hooks if isinstance(h, CheckpointHook))
    assert [score for score, _ in hook_obj.best_kept["m/acc"]] == [0.9, 0.8]
    with pytest.raises(ValueError, match="max_keep_best must be an int >= 1"):
        CheckpointHook(save_best="m/acc", max_keep_best=0)


def test_less_rule_for_losses_and_custom_keys(tmp_path):
    table = {1: 0.3, 2: 0.1, 3: 0.2}
    train(tmp_path / "a", dict(save_best="m/loss"), epochs=3, table=table, key="loss")
    assert names(tmp_path / "a", r"best_.*\.pth") == ["best_m_loss_epoch_2.pth"]
    runner = train(
        tmp_path / "b", dict(save_best="m/score", less_keys=["score"]), epochs=3, table=table,
        key="score",
    )  # fmt: skip
    hook = next(h for h in runner.hooks if isinstance(h, CheckpointHook))
    assert hook.best_scores == {"m/score": 0.1}
    runner = train(tmp_path / "c", dict(save_best="m/score", rule="greater"), epochs=3,
                   table=table, key="score")  # fmt: skip
    assert names(tmp_path / "c", r"best_.*\.pth") == ["best_m_score_epoch_1.pth"]


def test_best_state_survives_resume(tmp_path):
    table = {1: 0.5, 2: 0.9, 3: 0.7, 4: 0.8}
    hook = dict(interval=1, save_best="m/acc")
    full = train(tmp_path / "full", hook, epochs=4, table=table)
    train(tmp_path / "part", hook, epochs=3, table=table)
    resumed = train(tmp_path / "part", hook, epochs=4, table=table, resume=True)
    assert names(tmp_path / "part", r"best_.*\.pth") == names(tmp_path / "full", r"best_.*\.pth")
    hooks = [next(h for h in r.hooks if isinstance(h, CheckpointHook)) for r in (full, resumed)]
    assert hooks[0].best_scores == hooks[1].best_scores == {"m/acc": 0.9}


def test_published_keys_publish_last_and_best(tmp_path):
    table = {1: 0.2, 2: 0.1}
    hook = dict(interval=1, save_best="m/acc", published_keys=["meta", "state_dict"])
    train(tmp_path, hook, epochs=2, table=table)
    published = names(tmp_path, r".*-[0-9a-f]{8}\.pth")
    assert any(n.startswith("epoch_2-") for n in published)
    assert any(n.startswith("best_m_acc_epoch_1-") for n in published)
    for name in published:
        assert set(torch.load(tmp_path / name, weights_only=True)) == {"meta", "state_dict"}


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="rule must be 'greater' or 'less'"):
        CheckpointHook(save_best="acc", rule="bigger")
    # as in mmengine: one rule for all metrics, or one per metric; what mmengine
    # asserts is an AssertionError too
    assert CheckpointHook(save_best=["a", "b"], rule=["less"]).rules == ["less", "less"]
    with pytest.raises(ValueError, match="one rule per metric") as info:
        CheckpointHook(save_best=["a", "b"], rule=["greater", "less", "less"])
    assert isinstance(info.value, AssertionError)
    with pytest.raises(AssertionError, match="'auto' cannot be combined"):
        CheckpointHook(save_best=["auto", "acc"])
    with pytest.raises(ValueError, match="save_begin"):
        CheckpointHook(save_begin=-1)
    with pytest.raises(ValueError, match="cannot tell whether a larger 'm/zzz'"):
        CheckpointHook(save_best="m/zzz")._rule_for("m/zzz", None)


def test_unknown_best_metric_suggests_the_closest(tmp_path):
    with pytest.raises(KeyError, match="'m/acx' is not among.*m/acc"):
        train(tmp_path, dict(save_best="m/acx"), epochs=1, table={1: 1.0})


def test_iteration_checkpoint_inside_an_accumulation_window_waits_for_its_end(tmp_path):
    hook = dict(interval=3, by_epoch=False)
    train(
        tmp_path, hook, epochs=0, train_cfg=dict(type="IterBasedTrainLoop", max_iters=7),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01), accumulative_counts=2),
    )  # fmt: skip
    # windows close after iterations 2, 4, 6 and at the last (7): 3 -> 4, 6 stays, 7 is last
    assert names(tmp_path) == ["iter_4.pth", "iter_6.pth", "iter_7.pth"]


def test_epoch_ending_inside_an_accumulation_window_warns(tmp_path):
    train(
        tmp_path, dict(interval=1), epochs=3,
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01), accumulative_counts=3),
        train_dataloader={**LOADER, "batch_size": 3},  # 4 samples: 2 iterations per epoch
    )  # fmt: skip
    # windows close after iterations 3 and 6 (the last): epochs end after 2, 4 and 6
    logs = "".join(open(p).read() for p in tmp_path.glob("*/*.log"))
    assert "Epoch 1 ends inside a gradient accumulation window" in logs
    assert "Epoch 2 ends inside" in logs and "Epoch 3 ends inside" not in logs
    assert names(tmp_path) == ["epoch_1.pth", "epoch_2.pth", "epoch_3.pth"]


@pytest.mark.slow
def test_top_k_best_and_rotation_in_a_bucket(tmp_path, s3):
    run = s3.bucket() + "/run"
    table = {1: 0.5, 2: 0.9, 3: 0.7, 4: 0.8}
    hook = dict(interval=1, max_keep_ckpts=1, save_best="m/acc", max_keep_best=2)
    runner = train(run, hook, epochs=4, table=table)
    fs = s3.fs()
    remote = sorted(p.rsplit("/", 1)[-1] for p in fs.ls(run) if p.endswith(".pth"))
    assert remote == ["best_m_acc_epoch_2.pth", "best_m_acc_epoch_4.pth", "epoch_4.pth"]
    assert fs.cat_file(f"{run}/best_checkpoint") == b"best_m_acc_epoch_2.pth"
    assert remote == names(runner.work_dir)  # the staged folder holds the same


@pytest.mark.parametrize(
    ("key", "rule"),
    [("regression/mse", "less"), ("regression/mae", "less"), ("val/error", "less"),
     ("val/loss", "less"), ("regression/r2", "greater"), ("f1-score", "greater")],
)  # fmt: skip
def test_save_best_auto_infers_lower_is_better_for_error_metrics(key, rule):
    assert CheckpointHook(save_best="auto")._rule_for(key, None) == rule
