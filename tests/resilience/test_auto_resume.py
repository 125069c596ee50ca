"""Auto-resume (issue #18, items 8 and 10): a run that a launcher restarted, or one set to
``resume='auto'``, continues from the work dir's newest verified checkpoint and otherwise
starts as configured; ``resume=True`` keeps mmengine's meaning. (The real torchrun restart
is tests/cli/test_cluster_runs.py.)"""

from __future__ import annotations

import pytest
from runner_toys import log_text, toy_config, train_counting

from cadence.resilience.auto_resume import ResumePlan
from cadence.resilience.cluster import Attempt, current_attempt

LAUNCH_VARIABLES = ("SLURM_JOB_ID", "SLURM_JOBID", "SLURM_RESTART_COUNT",
                    "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT")  # fmt: skip
ITERS_PER_EPOCH = 4  # toy_config: 64 samples, batch 16


@pytest.fixture(autouse=True)
def _no_launcher(monkeypatch):
    for name in LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def test_a_restarted_run_resumes_from_the_work_dirs_newest_checkpoint(tmp_path, monkeypatch):
    train_counting(toy_config(tmp_path / "work", max_epochs=1))
    monkeypatch.setenv("TORCHELASTIC_RESTART_COUNT", "1")
    runner, counter = train_counting(toy_config(tmp_path / "work", max_epochs=2))  # no resume
    assert counter.iters == ITERS_PER_EPOCH  # epoch 2 only
    resumed = (f"Resumed from {tmp_path / 'work' / 'epoch_1.pth'} at epoch 1, iter 4 (auto-resume:"
               " restarted by the launcher (TORCHELASTIC_RESTART_COUNT=1))")  # fmt: skip
    assert resumed in log_text(runner)


def test_a_restarted_run_without_a_checkpoint_yet_starts_anew(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURM_RESTART_COUNT", "2")
    runner, counter = train_counting(toy_config(tmp_path / "work", max_epochs=1))
    assert counter.iters == ITERS_PER_EPOCH
    assert "auto-resume (restarted by the launcher (SLURM_RESTART_COUNT=2)): no checkpoint in" in (
        log_text(runner)
    )


def test_resume_auto_loads_the_weights_of_load_from_until_the_run_has_a_checkpoint(tmp_path):
    train_counting(toy_config(tmp_path / "pretrained", max_epochs=1))
    pretrained = str(tmp_path / "pretrained" / "epoch_1.pth")
    auto = dict(resume="auto", load_from=pretrained)
    _, counter = train_counting(toy_config(tmp_path / "work", max_epochs=1, **auto))
    assert counter.iters == ITERS_PER_EPOCH  # weights only: its position is not taken over
    runner, counter = train_counting(toy_config(tmp_path / "work", max_epochs=2, **auto))
    assert counter.iters == ITERS_PER_EPOCH  # now its own epoch_1.pth: resumed, epoch 2 only
    assert "(auto-resume: resume='auto')" in log_text(runner)


@pytest.mark.parametrize(
    ("resume", "load_from", "restarted", "auto", "configured", "init"),
    [
        (False, None, False, False, False, True),
        (False, None, True, True, False, True),  # a restart of a fresh run: like 'auto'
        ("auto", None, False, True, False, True),
        ("auto", "w.pth", False, True, False, False),  # load_from's weights if none of its own
        (True, None, False, False, True, False),  # mmengine: the newest, else anew
        (True, None, True, True, False, False),
        (True, "w.pth", True, True, True, False),  # mmengine: resume from w.pth if none
        ("c.pth", None, True, True, "c.pth", False),
    ],
)
def test_resume_plans(resume, load_from, restarted, auto, configured, init):
    attempt = Attempt({"TORCHELASTIC_RESTART_COUNT": int(restarted)}, {})
    plan = ResumePlan(resume, load_from, attempt)
    assert (plan.auto, plan.configured, plan.initialises_weights) == (auto, configured, init)


def test_the_attempt_comes_from_the_launchers_variables():
    assert not current_attempt({}).restarted
    elastic = current_attempt({"TORCHELASTIC_RUN_ID": "none", "TORCHELASTIC_RESTART_COUNT": "2"})
    assert elastic.restarted and elastic.jobs == {}  # torchrun's default id names no job
    assert elastic.describe() == "TORCHELASTIC_RESTART_COUNT=2"
    slurm = current_attempt({"SLURM_JOB_ID": "77"})
    assert not slurm.restarted and slurm.jobs == {"SLURM_RESTART_COUNT": "77"}
    previous = current_attempt({"SLURM_JOB_ID": "77"}).as_record()
    assert current_attempt({"SLURM_JOB_ID": "77", "SLURM_RESTART_COUNT": "1"}).follows(previous)
    assert not current_attempt({"SLURM_JOB_ID": "78", "SLURM_RESTART_COUNT": "1"}).follows(previous)
    # torchrun's agents count restarts per machine; the group takes the highest count
    one = Attempt({"TORCHELASTIC_RESTART_COUNT": 1}, {})
    merged = Attempt.merged([Attempt({"TORCHELASTIC_RESTART_COUNT": 0}, {}), one])
    assert merged.counts == {"TORCHELASTIC_RESTART_COUNT": 1}
