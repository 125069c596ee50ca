"""EarlyStoppingHook: stops at the epoch computed by hand from a scripted metric sequence."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from hook_toys import Line, Ramp
from runner_double import StandInRunner

from cadence.evaluator import BaseMetric
from cadence.hooks import EarlyStoppingHook
from cadence.registry import DATASETS, HOOKS, METRICS, MODELS
from cadence.runner import Runner


class Scripted(BaseMetric):
    """Reports the next value of ``values`` at each evaluation."""

    default_prefix = "scripted"

    def __init__(self, values, key="acc", **kwargs) -> None:
        super().__init__(**kwargs)
        self.values, self.key, self.calls = list(values), key, 0

    def process(self, data_batch, data_samples) -> None:
        self.results.extend(0 for _ in data_samples)

    def compute_metrics(self, results):
        value = self.values[self.calls]
        self.calls += 1
        return {self.key: value}


@pytest.fixture(autouse=True)
def _toys():
    DATASETS.register_module(module=Ramp, force=True)
    MODELS.register_module(module=Line, force=True)
    METRICS.register_module(module=Scripted, force=True)


def train(tmp_path, values, stopper, epochs=10, key="acc", **overrides) -> Runner:
    loader = dict(
        batch_size=8,
        dataset=dict(type="Ramp", n=8),
        sampler=dict(type="DefaultSampler"),
        collate_fn=dict(type="default_collate"),
    )
    cfg = dict(
        model=dict(type="Line"),
        work_dir=str(tmp_path),
        train_dataloader=loader,
        train_cfg=dict(max_epochs=epochs),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        val_dataloader=loader,
        val_cfg=dict(),
        val_evaluator=dict(type="Scripted", values=values, key=key),
        custom_hooks=[stopper],
        default_hooks=dict(logger=dict(type="LoggerHook", interval=100)),
    )
    cfg.update(overrides)
    runner = Runner(**cfg)
    runner.train()
    return runner


def test_greater_rule_stops_after_patience_validations_without_improvement(tmp_path):
    # 0.5 best; 0.7 >= 0.5 + 0.1 best; 0.75 and 0.78 < 0.8: two misses -> stop after epoch 4
    values = [0.5, 0.7, 0.75, 0.78, 0.99, 0.99]
    stopper = dict(type="EarlyStoppingHook", monitor="scripted/acc", patience=2, min_delta=0.1)
    runner = train(tmp_path, values, stopper)
    assert runner.epoch == 4
    hook = next(h for h in runner.hooks if isinstance(h, EarlyStoppingHook))
    assert hook.rule == "greater" and hook.best_score == 0.7 and hook.wait_count == 2


def test_less_rule_inferred_for_losses_and_improvement_resets_the_count(tmp_path):
    # 1.0 best; 0.95 miss(1); 0.5 best (reset); 0.45, 0.44, 0.43 misses -> stop after epoch 6
    values = [1.0, 0.95, 0.5, 0.45, 0.44, 0.43, 0.1, 0.1]
    stopper = dict(type="EarlyStoppingHook", monitor="scripted/loss", patience=3, min_delta=0.1)
    runner = train(tmp_path, values, stopper, key="loss")
    assert runner.epoch == 6


def test_non_finite_value_and_threshold_stop_at_once(tmp_path):
    nan_stop = dict(type="EarlyStoppingHook", monitor="scripted/acc", patience=5)
    assert train(tmp_path / "nan", [0.5, math.nan, 0.6], nan_stop).epoch == 2
    lenient = dict(type="EarlyStoppingHook", monitor="scripted/acc", patience=5, check_finite=False)
    assert train(tmp_path / "lenient", [0.5, math.nan, 0.6], lenient, epochs=3).epoch == 3
    threshold = dict(
        type="EarlyStoppingHook", monitor="scripted/acc", patience=5, stopping_threshold=0.9
    )
    assert train(tmp_path / "thr", [0.5, 0.6, 0.95, 0.1], threshold).epoch == 3


def test_resume_keeps_best_score_and_wait_count(tmp_path):
    stopper = dict(type="EarlyStoppingHook", monitor="scripted/acc", patience=2, min_delta=0.1)
    values = [0.5, 0.7, 0.75, 0.78, 0.79, 0.8, 0.81, 0.82]
    train(tmp_path, values[:3], stopper, epochs=3)
    # the state after the third validation (epoch_3.pth's after-validation file) holds best
    # 0.7, wait 1 (0.75 missed). The resumed run validates after epoch 4 (0.78 misses) ->
    # stops after epoch 4, as the uninterrupted run does (starting afresh, 0.78 would
    # become the best and it would stop after epoch 6).
    resumed = train(tmp_path, values[3:], stopper, resume=True)
    assert resumed.epoch == 4


def test_missing_monitor_warns_or_raises_with_suggestion():
    runner = StandInRunner(train_loop=SimpleNamespace(stop_training=False))
    hook = EarlyStoppingHook(monitor="accuracy/top1")
    hook.before_train(runner)
    with pytest.warns(UserWarning, match="accuracy/top5"):
        hook.after_val_epoch(runner, {"accuracy/top5": 1.0})
    strict = EarlyStoppingHook(monitor="accuracy/top1", strict=True)
    strict.before_train(runner)
    with pytest.raises(KeyError, match="Did you mean 'accuracy/top5'"):
        strict.after_val_epoch(runner, {"accuracy/top5": 1.0})
    assert runner.train_loop.stop_training is False


def test_validation_outside_training_is_ignored():
    hook = EarlyStoppingHook(monitor="loss", patience=1)
    runner = StandInRunner()
    hook.before_run(runner)  # runner.val(): a run that does not train
    hook.after_val_epoch(runner, {"loss": 1.0})  # no training loop touched
    assert hook.wait_count == 0 and hook.best_score == math.inf


def test_state_dict_round_trip_continues_the_same_decisions():
    first = EarlyStoppingHook(monitor="acc", patience=3, min_delta=0.0)
    for value in (0.3, 0.2, 0.1):
        assert first.check(value) is None
    second = EarlyStoppingHook(monitor="acc", patience=3, min_delta=0.0)
    second.load_state_dict(first.state_dict())
    assert second.best_score == 0.3 and second.wait_count == 2
    assert second.check(0.25) is not None  # third miss


def test_arguments_are_checked_and_registered():
    with pytest.raises(ValueError, match="cannot tell"):
        EarlyStoppingHook(monitor="bleu_score")
    with pytest.raises(ValueError, match="'greater' or 'less'"):
        EarlyStoppingHook(monitor="acc", rule="bigger")
    with pytest.raises(ValueError, match="patience"):
        EarlyStoppingHook(monitor="acc", patience=-1)
    zero = EarlyStoppingHook(monitor="acc", patience=0, min_delta=0.0)
    assert zero.check(0.5) is None and zero.check(0.4) is not None  # stops at the first miss
    assert EarlyStoppingHook(monitor="f1_score", rule="greater").rule == "greater"
    assert EarlyStoppingHook(monitor="val/mIoU").rule == "greater"
    hook = HOOKS.build(dict(type="EarlyStoppingHook", monitor="loss"))
    assert hook.rule == "less" and hook.min_delta == 0.1 and hook.patience == 5
