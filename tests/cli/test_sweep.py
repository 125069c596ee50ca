"""``cadence sweep``: errors before any trial, pruning through the validation hook, and the
issue's done-when run: two worker processes share one SQLite study, both are killed
(SIGKILL) in the middle, and ``--resume`` finishes the sweep without repeating a trial."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import optuna
import pytest
import sweep_toys  # noqa: F401  (registers the toys before the registries' per-test snapshot)
from optuna.trial import TrialState
from signal_runs import Job, cadence

from cadence.cli import main
from cadence.config import Config
from cadence.sweep import parse_params
from cadence.sweep.trial import run_trial

METRIC = "val/accuracy/top1"


def write_config(folder: Path, epochs: int = 3, delay: float = 0.0) -> Path:
    """A sweepable config of the tiny run of ``sweep_toys`` (``epochs`` epochs of 4
    iterations, validating after each); ``delay`` seconds of sleep after each iteration."""
    loader = dict(sampler=dict(type="DefaultSampler", shuffle=False),
                  collate_fn=dict(type="default_collate"))  # fmt: skip
    cfg: dict[str, Any] = dict(
        custom_imports=dict(imports=["sweep_toys"]),
        model=dict(type="LinearClassifier"),
        train_dataloader=dict(batch_size=16, dataset=dict(type="TwoBlobs", n=64), **loader),
        val_dataloader=dict(batch_size=64, dataset=dict(type="TwoBlobs", n=64, seed=1), **loader),
        val_evaluator=dict(type="Accuracy"),
        val_cfg=dict(),
        train_cfg=dict(by_epoch=True, max_epochs=epochs, val_interval=1),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        default_hooks=dict(logger=dict(type="LoggerHook", interval=100, progress="off"),
                           checkpoint=dict(type="CheckpointHook", interval=-1, save_last=False)),
        custom_hooks=[dict(type="SlowDown", delay=delay)],
        randomness=dict(seed=0),
    )  # fmt: skip
    path = folder / "cfg.py"
    path.write_text("".join(f"{key} = {value!r}\n" for key, value in cfg.items()))
    return path


def test_a_bad_param_spec_exits_2_naming_it_and_the_kinds(tmp_path, capsys):
    cfg = write_config(tmp_path)
    code = main(["sweep", str(cfg), "--param", "optim_wrapper.optimizer.lr=log:1:2",
                 "--metric", METRIC])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("cadence: error: --param 'optim_wrapper.optimizer.lr=log:1:2': "
                          "unknown kind 'log'; valid kinds: loguniform:LOW:HIGH")  # fmt: skip
    code = main(["sweep", str(cfg), "--param", "optim_wrapper.optimizer.lrr=uniform:0:1",
                 "--metric", METRIC, "--work-dir", str(tmp_path / "s")])  # fmt: skip
    assert code == 2
    assert "the config has no key 'lrr' under optim_wrapper.optimizer" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()  # nothing started


class PruneFrom(optuna.pruners.BasePruner):
    """Prune every trial once it has reported step ``step``."""

    def __init__(self, step: int) -> None:
        self.step = step

    def prune(self, study: Any, trial: Any) -> bool:
        return max(trial.intermediate_values, default=-1) >= self.step


def test_a_pruned_trial_stops_after_that_validation_and_keeps_its_work_dir(tmp_path):
    base = Config.fromfile(str(write_config(tmp_path)))
    study = optuna.create_study(direction="maximize", pruner=PruneFrom(2))
    specs = parse_params(["optim_wrapper.optimizer.lr=uniform:0.01:0.5"])
    study.optimize(
        lambda trial: run_trial(trial, base.copy, specs, METRIC, str(tmp_path), prune=True), 1
    )
    (trial,) = study.trials
    assert trial.state == TrialState.PRUNED
    assert sorted(trial.intermediate_values) == [1, 2]  # epochs 1 and 2 validated; no 3rd
    work_dir = tmp_path / "trial_0"
    assert trial.user_attrs["work_dir"] == str(work_dir)
    (record,) = json.loads((work_dir / "run.json").read_text())
    assert record["command"]  # the run's record stays, as do its logs
    log = next(work_dir.glob("*/*.log")).read_text()
    assert "Epoch(val) [2]" in log and "Epoch(val) [3]" not in log
    assert "Sweep: trial 0 pruned at step 2" in log


def _states(db: Path) -> list[tuple[int, str, int]]:
    """(number, state, number of parameters) of every trial, read straight from the SQLite file."""
    if not db.exists():
        return []
    query = ("SELECT t.number, t.state, COUNT(p.param_id) FROM trials t LEFT JOIN trial_params p "
             "ON p.trial_id = t.trial_id GROUP BY t.trial_id ORDER BY t.number")  # fmt: skip
    try:
        with sqlite3.connect(db, timeout=10) as con:
            return con.execute(query).fetchall()
    except sqlite3.OperationalError:  # the tables are being created
        return []


def _study_exists(db: Path) -> bool:
    if not db.exists():  # (connecting would create the file)
        return False
    try:
        with sqlite3.connect(db, timeout=10) as con:
            return bool(con.execute("SELECT COUNT(*) FROM studies").fetchone()[0])
    except sqlite3.OperationalError:  # no file or no tables yet
        return False


@pytest.mark.dist
def test_killed_workers_sweep_finishes_with_resume_without_repeating_a_trial(tmp_path, capsys):
    # each trial outlasts the second worker's start
    cfg = write_config(tmp_path, epochs=2, delay=0.25)
    sweep_dir = tmp_path / "sweep"
    args = cadence("sweep", str(cfg), "--param", "optim_wrapper.optimizer.lr=loguniform:1e-3:1",
                   "--param", "train_dataloader.batch_size=choice:8,16", "--trials", "6",
                   "--metric", METRIC, "--work-dir", str(sweep_dir))  # fmt: skip
    db = sweep_dir / "study.db"
    workers = [Job(tmp_path, [*args, "--no-plot"], name="a")]
    try:  # the second worker joins the study once the first one has made it
        workers[0].wait_until(lambda: _study_exists(db), "the study", 120)
        workers.append(Job(tmp_path, [*args, "--no-plot", "--resume"], name="b"))

        def both_training_one_done() -> bool:
            if workers[1].proc.poll() is not None:
                raise AssertionError("the second worker ended:\n" + workers[1].err_tail())
            rows = _states(db)  # a trial has its parameters once its run is being set up
            return any(s == "COMPLETE" for _, s, _ in rows) and sum(
                s == "RUNNING" and n == 2 for _, s, n in rows) == 2  # fmt: skip

        workers[0].wait_until(both_training_one_done, "a completed trial and two running", 120)
        for job in workers:
            job.send(signal.SIGKILL)
            assert job.finish(timeout=30) == -signal.SIGKILL
    finally:
        for job in workers:
            job.cleanup()
    before = {number: state for number, state, _ in _states(db)}
    interrupted = [n for n, s in before.items() if s == "RUNNING"]
    completed = [n for n, s in before.items() if s == "COMPLETE"]
    assert interrupted and completed and len(completed) < 6
    storage = optuna.storages.RDBStorage(f"sqlite:///{db}")
    old = {t.number: t for t in optuna.load_study(study_name="cfg", storage=storage).trials}
    assert {old[n].user_attrs["worker"]["pid"] for n in old} == {j.proc.pid for j in workers}

    started = time.monotonic()  # resumed in this process: one interpreter start less
    assert main([*args[2:], "--resume"]) == 0
    took = time.monotonic() - started

    study = optuna.load_study(study_name="cfg", storage=storage)
    trials = {t.number: t for t in study.trials}
    done = [t for t in trials.values() if t.state == TrialState.COMPLETE]
    assert len(done) == 6
    for number in completed:  # kept as they were, never run again
        assert trials[number].state == TrialState.COMPLETE
        assert trials[number].value == old[number].value and trials[number].params == old[
            number].params  # fmt: skip
        runs = json.loads((sweep_dir / f"trial_{number}" / "run.json").read_text())
        assert len(runs) == 1
    retried = {t.system_attrs.get("failed_trial"): t for t in trials.values()}
    for number in interrupted:  # failed, then run again with its parameters
        assert trials[number].state == TrialState.FAIL
        assert "died" in trials[number].user_attrs["failed_because"]
        assert retried[number].state == TrialState.COMPLETE
        assert retried[number].params == old[number].params
    assert len(trials) == 6 + len(interrupted)
    dirs = {p.name for p in sweep_dir.glob("trial_*")}  # a trial killed early may have none
    assert {f"trial_{t.number}" for t in done} <= dirs <= {f"trial_{n}" for n in trials}
    out = capsys.readouterr().out
    best = study.best_trial
    assert f"best: trial {best.number}, {METRIC} = " in out
    assert f"saved {sweep_dir / 'sweep.png'}" in out and (sweep_dir / "sweep.png").stat().st_size
    print(f"resume finished the sweep in {took:.1f} s")
