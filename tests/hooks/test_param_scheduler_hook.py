"""ParamSchedulerHook: which schedulers step after an iteration, an epoch and a validation."""

from __future__ import annotations

import pytest
from runner_double import StandInRunner

from cadence.hooks import ParamSchedulerHook


class Scheduler:
    def __init__(self, by_epoch: bool, need_val_args: bool = False) -> None:
        self.by_epoch, self.need_val_args = by_epoch, need_val_args
        self.steps: list = []

    def step(self, metrics=None):
        self.steps.append(metrics)


@pytest.mark.parametrize("as_dict", [False, True])
def test_iteration_epoch_and_metric_schedulers_step_at_their_moments(as_dict):
    per_iter, per_epoch = Scheduler(by_epoch=False), Scheduler(by_epoch=True)
    plateau = Scheduler(by_epoch=True, need_val_args=True)
    schedulers = [per_iter, per_epoch, plateau]
    held = {"a": [per_iter], "b": [per_epoch, plateau]} if as_dict else schedulers
    runner = StandInRunner(param_schedulers=held)
    hook = ParamSchedulerHook()
    for batch_idx in range(3):
        hook.after_train_iter(runner, batch_idx)
    hook.after_train_epoch(runner)
    hook.after_val_epoch(runner, metrics={"acc": 0.5})
    hook.after_val_epoch(runner, metrics={})  # nothing to give
    assert per_iter.steps == [None] * 3
    assert per_epoch.steps == [None]
    assert plateau.steps == [None, {"acc": 0.5}]


def test_no_schedulers_is_fine():
    hook = ParamSchedulerHook()
    for held in (None, [], {}):
        runner = StandInRunner(param_schedulers=held)
        hook.after_train_iter(runner, 0)
        hook.after_train_epoch(runner)
        hook.after_val_epoch(runner, metrics={"acc": 1.0})


def test_schedulers_that_are_not_a_list_or_a_dict_of_lists_are_a_type_error():
    hook = ParamSchedulerHook()
    runner = StandInRunner()
    runner.param_schedulers = object()  # type: ignore[assignment]  # one scheduler, not a list
    with pytest.raises(TypeError, match="should be list of ParamScheduler or a dict"):
        hook.after_train_epoch(runner)
    runner.param_schedulers = {"generator": object()}  # type: ignore[dict-item]
    with pytest.raises(TypeError, match="should be list of ParamScheduler or a dict"):
        hook.after_train_epoch(runner)
