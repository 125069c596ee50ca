"""A worker's turn: claiming a trial with its worker recorded, and recording how it ended."""

from __future__ import annotations

import os
import socket

import optuna
import pytest
from optuna.trial import TrialState

from cadence.sweep.study import open_study
from cadence.sweep.worker import claim_trial, run_one

SWEEP = {"metric": "val/acc", "direction": "maximize", "params": {"lr": "uniform:0:1"}}
ME = {"host": socket.gethostname(), "pid": os.getpid()}


def _study(storage, name):
    return open_study(storage, name, "maximize", SWEEP, resume=False)


def test_a_claimed_trial_is_running_with_its_worker_queued_ones_first(storage, request):
    study = _study(storage, request.node.name)
    fresh = claim_trial(study)
    frozen = storage.get_trial(fresh._trial_id)
    assert frozen.state == TrialState.RUNNING and frozen.user_attrs["worker"] == ME
    study.enqueue_trial({"lr": 0.25})
    queued = claim_trial(study)
    assert queued.suggest_float("lr", 0, 1) == 0.25  # the queued trial, with its parameters
    assert storage.get_trial(queued._trial_id).user_attrs["worker"] == ME


def test_run_one_records_complete_pruned_and_failed_trials(storage, request):
    study = _study(storage, request.node.name)

    def pruned(trial):
        raise optuna.TrialPruned()

    def boom(trial):
        raise RuntimeError("boom")

    assert run_one(study, lambda trial: 0.5).state == TrialState.COMPLETE
    assert run_one(study, pruned).state == TrialState.PRUNED
    with pytest.raises(RuntimeError, match="boom"):
        run_one(study, boom)
    assert [t.state for t in study.get_trials()] == [
        TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL]  # fmt: skip


def test_an_interrupted_trial_is_failed_and_queued_again(storage, request):
    study = _study(storage, request.node.name)

    def interrupted(trial):
        trial.suggest_float("lr", 0, 1)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_one(study, interrupted)
    first, retry = study.get_trials()
    assert (first.state, retry.state) == (TrialState.FAIL, TrialState.WAITING)
    assert retry.params == first.params and retry.system_attrs["failed_trial"] == 0
