"""The sweep's study in a real SQLite file: creating, joining, the trial budget,
trials of dead workers, and the final table."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys

import optuna
import pytest
from optuna.trial import TrialState

from cadence.sweep import SweepError, parse_params
from cadence.sweep.report import print_report
from cadence.sweep.study import (
    budget_left,
    default_storage,
    fail_dead_trials,
    open_study,
)

pytestmark = pytest.mark.filterwarnings("ignore:Heartbeat of storage:UserWarning")  # ask/tell

SWEEP = {"metric": "val/acc", "direction": "maximize", "params": {"lr": "uniform:0:1"}}


def _open(storage, name, resume=False, sweep=SWEEP):
    return open_study(storage, name, "maximize", sweep, resume)


def test_the_default_storage_is_an_sqlite_file_in_the_sweep_folder(tmp_path):
    assert default_storage(str(tmp_path)) == f"sqlite:///{tmp_path}/study.db"


def test_a_study_with_trials_is_continued_only_with_resume_and_the_same_sweep(storage, request):
    study = _open(storage, request.node.name)
    study.tell(study.ask({"lr": optuna.distributions.FloatDistribution(0, 1)}), 0.5)
    with pytest.raises(SweepError, match=r"already has 1 trial\(s\); pass --resume"):
        _open(storage, request.node.name)
    assert len(_open(storage, request.node.name, resume=True).trials) == 1
    other = {**SWEEP, "params": {"lr": "uniform:0:2"}}
    with pytest.raises(SweepError, match="was started with a different sweep"):
        _open(storage, request.node.name, resume=True, sweep=other)


def test_a_dead_local_workers_trial_is_failed_and_queued_again_once(storage, request):
    study = _open(storage, request.node.name)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lost = study.ask({"lr": optuna.distributions.FloatDistribution(0, 1)})
    lost.set_user_attr("worker", {"host": socket.gethostname(), "pid": dead.pid})
    alive = study.ask({"lr": optuna.distributions.FloatDistribution(0, 1)})
    alive.set_user_attr("worker", {"host": socket.gethostname(), "pid": os.getpid()})
    assert fail_dead_trials(study) == [lost.number]
    assert fail_dead_trials(study) == []  # already failed: not again
    states = {t.number: t.state for t in study.get_trials()}
    assert states == {0: TrialState.FAIL, 1: TrialState.RUNNING, 2: TrialState.WAITING}
    retry = study.get_trials()[2]
    assert retry.params == {"lr": lost.params["lr"]}
    assert study.get_trials()[0].user_attrs["failed_because"] == f"its worker (pid {dead.pid}) died"


def test_the_budget_counts_finished_running_and_raising_trials_not_killed_ones(storage, request):
    study = _open(storage, request.node.name)
    dist = {"lr": optuna.distributions.FloatDistribution(0, 1)}
    study.tell(study.ask(dist), 1.0)  # complete
    study.tell(study.ask(dist), state=TrialState.PRUNED)
    raised = study.ask(dist)
    raised.set_user_attr("error", "RuntimeError: boom")
    study.tell(raised, state=TrialState.FAIL)
    study.tell(study.ask(dist), state=TrialState.FAIL)  # killed: its retry counts instead
    study.ask(dist)  # running
    assert budget_left(study, 6) == 2
    assert budget_left(study, 3) == 0


def test_the_plain_table_lists_every_trial_and_the_best(storage, request):
    study = _open(storage, request.node.name)
    dist = {"lr": optuna.distributions.FloatDistribution(0, 1)}
    for lr, value in [(0.1, 60.0), (0.3, 80.5)]:
        study.enqueue_trial({"lr": lr})
        study.tell(study.ask(dist), value)
    out = io.StringIO()
    print_report(study, parse_params(["lr=uniform:0:1"]), "val/acc", out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["trial", "state", "value", "lr", "note"]
    assert [line.split()[:3] for line in lines[1:3]] == [["0", "COMPLETE", "60"],
                                                          ["1", "COMPLETE", "80.5"]]  # fmt: skip
    assert lines[3].startswith("best: trial 1, val/acc = 80.5 (lr=0.3)")
