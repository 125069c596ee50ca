"""SLURM requeue (issue #18, item 10): in a SLURM job, SIGUSR1 (``--signal=USR1@90``) saves at
the next iteration and requeues the job; the requeued job (``SLURM_RESTART_COUNT=1``) resumes
by itself. SLURM is stood in for: a fake job environment and an ``scontrol`` on PATH that
records its arguments. The signals and the runs are real."""

from __future__ import annotations

import glob
import os
import signal

import pytest
import torch
from hook_toys import Line, Ramp, SignalAt, fake_scontrol, make_runner

from cadence.hooks import PreemptionHook
from cadence.registry import DATASETS, MODELS
from cadence.resilience.slurm_requeue import SlurmRequeue

LAUNCH_VARIABLES = ("SLURM_JOB_ID", "SLURM_JOBID", "SLURM_RESTART_COUNT",
                    "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT")  # fmt: skip


@pytest.fixture(autouse=True)
def _toys(monkeypatch):
    DATASETS.register_module(module=Ramp, force=True)
    MODELS.register_module(module=Line, force=True)
    for name in LAUNCH_VARIABLES:
        monkeypatch.delenv(name, raising=False)


def log_of(runner) -> str:
    return "".join(open(p).read() for p in glob.glob(os.path.join(runner.log_dir, "*.log")))


def test_sigusr1_in_a_slurm_job_requeues_it_and_the_requeued_job_resumes_by_itself(
    tmp_path, monkeypatch
):
    path, calls = fake_scontrol(tmp_path / "slurm")
    monkeypatch.setenv("PATH", path)
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    work = tmp_path / "work"
    first = make_runner(work)
    first.register_hook(SignalAt(at=4, signum=signal.SIGUSR1))
    first.train()
    assert first.preempted is not None and first.preempted.signal_name == "SIGUSR1"
    assert calls.read_text() == "requeue 4242\n"  # after the checkpoint was written
    assert "SLURM job 4242 requeued (scontrol requeue 4242)" in str(first.preempted)

    monkeypatch.setenv("SLURM_RESTART_COUNT", "1")  # what SLURM sets in the requeued job
    again = make_runner(work)  # the same command: no --resume
    counter = SignalAt(at=-1, signum=signal.SIGUSR1)
    again.register_hook(counter)
    again.train()
    assert counter.iters == 18 - 5  # 3 epochs of 6 iterations; 5 done before the signal
    assert calls.read_text() == "requeue 4242\n"  # no signal: nothing more was requeued

    monkeypatch.delenv("SLURM_RESTART_COUNT")
    reference = make_runner(tmp_path / "reference")
    reference.train()
    for key, value in reference.model.state_dict().items():
        assert torch.equal(again.model.state_dict()[key], value), key


def test_a_refused_requeue_is_logged_and_the_run_still_ends_with_its_checkpoint(
    tmp_path, monkeypatch
):
    path, calls = fake_scontrol(tmp_path / "slurm", exit_code=1)
    monkeypatch.setenv("PATH", path)
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    runner = make_runner(tmp_path / "work")
    runner.register_hook(SignalAt(at=1, signum=signal.SIGUSR1))
    runner.train()
    assert runner.preempted is not None and runner.preempted.requeued is None
    assert os.path.isfile(runner.preempted.path)
    assert calls.read_text() == "requeue 4242\n"
    log = log_of(runner)
    assert "SLURM job 4242 was not requeued" in log and "exited 1: scontrol: error: refused" in log


@pytest.mark.parametrize(
    ("mode", "signal_name", "env", "job"),
    [
        ("auto", "SIGUSR1", {"SLURM_JOB_ID": "7"}, "7"),
        ("auto", "SIGTERM", {"SLURM_JOB_ID": "7"}, None),  # scancel, or SLURM requeues itself
        ("auto", "SIGUSR1", {}, None),  # not a SLURM job
        (True, "SIGTERM", {"SLURM_JOBID": "7"}, "7"),
        (False, "SIGUSR1", {"SLURM_JOB_ID": "7"}, None),
    ],
)
def test_which_stops_requeue_the_job(mode, signal_name, env, job):
    assert SlurmRequeue(mode).job_to_requeue(signal_name, env) == job


def test_a_bad_requeue_setting_is_named():
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match="requeue must be 'auto', True or False"):
            PreemptionHook(requeue=bad)
    assert PreemptionHook().requeue.mode == "auto"
