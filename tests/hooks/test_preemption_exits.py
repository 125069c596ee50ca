"""PreemptionHook on a bad day: a run that cannot reach the next iteration, or that gets a
second signal, exits on its own, with 128 + signum and a message, instead of lingering.

Real ``cadence train`` processes (and torchrun for the blocked collective) and real
signals; each test prints the measured seconds from signal to exit.
"""

from __future__ import annotations

import re
import signal
import time

import pytest
from hook_toys import fake_scontrol
from signal_runs import Job, cadence, record, write_config

from cadence.dist.testing import free_port
from cadence.utils.exit_codes import ExitCode


def preemption(**kwargs):
    return dict(type="PreemptionHook", **kwargs)


def default_hooks(interval: int = 100_000, **preempt):
    return dict(
        logger=dict(type="LoggerHook", progress="off", interval=1000),
        checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=interval),
        preemption=preemption(**preempt),
    )


def log_text(tmp_path) -> str:
    return "".join(p.read_text() for p in (tmp_path / "work").glob("*/*.log"))


@pytest.mark.slow
def test_a_signal_that_finds_no_iteration_boundary_exits_after_the_grace_period(tmp_path):
    marks = str(tmp_path / "marks")
    cfg = write_config(tmp_path, hooks=[dict(type="StallAt", marks=marks, at=3)],
                       default_hooks=default_hooks(grace_period=2))  # fmt: skip
    job = Job(tmp_path, cadence("train", str(cfg)))
    try:
        job.wait_for("stalled.rank0")
        sent = job.send(signal.SIGTERM)
        code = job.finish(timeout=60)
        took = time.monotonic() - sent
        record("grace period, one process", signal_to_exit=took)
        assert code == 128 + signal.SIGTERM, job.err_tail()
        assert 1.5 < took < 30
        message = ("SIGTERM received in iteration 3; iteration 3 did not finish within the "
                   "grace period of 2 s")  # fmt: skip
        assert message in job.err_tail() and "no checkpoint was saved" in job.err_tail()
        assert message in log_text(tmp_path)
        assert not list((tmp_path / "work").glob("preempted_*"))
        assert job.survivors() == []
    finally:
        job.cleanup()


@pytest.mark.slow
def test_a_second_signal_during_the_save_exits_at_once_and_the_last_checkpoint_resumes(tmp_path):
    marks = str(tmp_path / "marks")
    slow = dict(type="SlowState", marks=marks, seconds=60, after=3)  # saves after iter 3 hang
    cfg = write_config(tmp_path, hooks=[slow], default_hooks=default_hooks(interval=3))
    job = Job(tmp_path, cadence("train", str(cfg)))
    try:
        job.wait_for("rank0.iter4")  # iter_3.pth is written by then
        first = job.send(signal.SIGTERM)
        job.wait_for("saving", timeout=30)  # the preemption checkpoint is being written
        time.sleep(max(0.0, first + 1.2 - time.monotonic()))  # past the duplicate window
        second = job.send(signal.SIGTERM)
        code = job.finish(timeout=60)
        took = time.monotonic() - second
        record("second signal during the save", second_signal_to_exit=took)
        assert code == 128 + signal.SIGTERM, job.err_tail()
        assert took < 15
        err = job.err_tail()
        assert "a second SIGTERM" in err
        assert "came while the preemption checkpoint was being written" in err
        assert "no checkpoint was saved" in err
        work = tmp_path / "work"
        assert (work / "last_checkpoint").read_text().strip() == "iter_3.pth"
        assert not list(work.glob("preempted_*.pth"))
        assert job.survivors() == []
    finally:
        job.cleanup()
    again = write_config(tmp_path, name="resume.py", train_cfg=dict(by_epoch=False, max_iters=5))
    resumed = Job(tmp_path, cadence("train", str(again), "--resume"), name="resume")
    try:
        assert resumed.finish(timeout=120) == 0, resumed.err_tail()
        assert f"Resumed from {tmp_path / 'work' / 'iter_3.pth'} at epoch 0, iter 3" in log_text(
            tmp_path
        )
    finally:
        resumed.cleanup()


@pytest.mark.slow
def test_the_same_signal_twice_at_once_is_one_request(tmp_path):
    """A group signal plus a launcher's relay reach a rank milliseconds apart: it saves."""
    cfg = write_config(tmp_path, default_hooks=default_hooks())
    job = Job(tmp_path, cadence("train", str(cfg)))
    try:
        job.wait_for("rank0.iter3")
        sent = job.send(signal.SIGTERM, group=True)
        job.send(signal.SIGTERM)
        code = job.finish(timeout=60)
        record("two SIGTERMs at once", signal_to_exit=time.monotonic() - sent)
        assert code == ExitCode.PREEMPTED, job.err_tail()  # saved, then stopped
        saved = (tmp_path / "work" / "last_checkpoint").read_text().strip()
        assert saved.startswith("preempted_iter_")
        assert "a second SIGTERM" not in job.err()
    finally:
        job.cleanup()


@pytest.mark.dist
@pytest.mark.slow
def test_ranks_blocked_in_a_collective_exit_after_the_grace_period_under_torchrun(tmp_path):
    """Rank 1 stalls; rank 0 blocks in the gradient all-reduce, where Python never runs its
    signal handler. torchrun relays SIGTERM to both; both exit after the grace period
    (before: torchrun waited its 30 s and then SIGKILLed them)."""
    marks = str(tmp_path / "marks")
    cfg = write_config(tmp_path, hooks=[dict(type="StallAt", marks=marks, at=3, rank=1)],
                       default_hooks=default_hooks(grace_period=2),
                       env_cfg=dict(dist_cfg=dict(backend="gloo", timeout=600)))  # fmt: skip
    job = Job(tmp_path, ["-m", "torch.distributed.run", "--nproc_per_node", "2",
                         "--master_port", str(free_port()),
                         *cadence("train", str(cfg), "--launcher", "pytorch")])  # fmt: skip
    try:
        job.wait_for("stalled.rank1", timeout=180)
        job.wait_for("rank0.iter3")
        time.sleep(1.0)  # rank 0 is inside iteration 4's all-reduce by now (it waits 600 s)
        sent = job.send(signal.SIGTERM)
        code = job.finish(timeout=90)
        took = time.monotonic() - sent
        record("grace period, blocked collective under torchrun", signal_to_exit=took)
        assert code != 0
        assert took < 25, job.err_tail()
        err = job.err_tail(20000)
        assert err.count("within the grace period of 2 s") == 2, err
        assert "(rank 1): SIGTERM received in iteration 3; iteration 3 did not finish" in err
        # rank 0 is normally blocked in iteration 4 by then; if it was still finishing 3, the
        # signal reached it in 3 and iteration 4 is the one that did not finish
        assert re.search(r"\(rank 0\): SIGTERM received in iteration [34]; iteration 4 did", err)
        assert job.survivors() == []
    finally:
        job.cleanup()


@pytest.mark.slow
@pytest.mark.parametrize(
    ("signum", "scontrol_exit", "expected"),
    [
        (signal.SIGTERM, None, ExitCode.PREEMPTED),  # saved; --resume continues
        (signal.SIGUSR1, 0, ExitCode.PREEMPTED),  # saved and requeued: it comes back
        (signal.SIGUSR1, 1, ExitCode.REQUEUE_REFUSED),  # saved, but nobody will restart it
    ],
    ids=["sigterm", "requeued", "requeue-refused"],
)
def test_a_preempted_run_exits_with_a_code_a_scheduler_can_tell_from_finished(
    tmp_path, monkeypatch, signum, scontrol_exit, expected
):
    """Issue 27: each of these exited 0, as a finished run does."""
    if scontrol_exit is not None:  # a SLURM job whose `scontrol requeue` does scontrol_exit
        path, calls = fake_scontrol(tmp_path / "slurm", exit_code=scontrol_exit)
        monkeypatch.setenv("PATH", path)
        monkeypatch.setenv("SLURM_JOB_ID", "4242")
    job = Job(tmp_path, cadence("train", str(write_config(tmp_path))))
    try:
        job.wait_for("rank0.iter3")
        job.send(signum)
        assert job.finish(timeout=60) == expected, job.err_tail()
        assert list((tmp_path / "work").glob("preempted_iter_*.pth"))
        if scontrol_exit is not None:
            assert calls.read_text() == "requeue 4242\n"
    finally:
        job.cleanup()
