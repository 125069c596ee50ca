"""``cadence train --nproc N`` stays in charge of its job (issue #18, item 4): stop signals
reach the ranks, the parent waits for their preemption save and exits with their code, and
nothing outlives it. Real processes, real signals, real torchrun (gloo on CPU)."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import time

import pytest
from signal_runs import Job, alive, cadence, record, write_config

from cadence.checkpoint import read_manifest
from cadence.cli.launch import run_job
from cadence.cli.supervise import child_pids, exit_code
from cadence.utils.exit_codes import ExitCode

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")

# A stand-in for torchrun: starts two "ranks" that save (a file) and exit 0 on SIGTERM,
# and exits with the worst of their codes, as torchrun does when its ranks end by themselves.
LAUNCHER = textwrap.dedent("""
    import subprocess, sys
    RANK = '''
    import os, signal, sys, time
    def stop(signum, frame):
        open(os.path.join(sys.argv[1], f"saved.{os.getpid()}"), "w").close()
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    open(os.path.join(sys.argv[1], f"pid.rank.{os.getpid()}"), "w").close()
    while True:
        time.sleep(0.1)
    '''
    ranks = [subprocess.Popen([sys.executable, "-c", RANK, sys.argv[1]], start_new_session=True)
             for _ in range(2)]
    sys.exit(max(rank.wait() for rank in ranks))
""")

SUPERVISOR = textwrap.dedent("""
    import os, sys
    from cadence.cli.supervise import launch_and_supervise
    open(os.path.join(sys.argv[1], "pid.supervisor." + str(os.getpid())), "w").close()
    sys.exit(launch_and_supervise([sys.executable, "-c", sys.argv[2], sys.argv[1]],
                                  dict(os.environ)))
""")


# A stand-in for torchrun as it is: its ranks report their codes (as `cadence` does under
# --nproc) and exit with them, and it exits 1 whatever they were.
REPORTING_LAUNCHER = textwrap.dedent("""
    import os, subprocess, sys
    RANK = "from cadence.utils.exit_codes import report; import sys; " \\
           "report(int(sys.argv[1])); sys.exit(int(sys.argv[1]))"
    ranks = [subprocess.Popen([sys.executable, "-c", RANK, code], env={**os.environ,
             "RANK": str(rank)}) for rank, code in enumerate(sys.argv[1:])]
    sys.exit(1 if any(rank.wait() for rank in ranks) else 0)
""")


def test_the_nproc_parent_exits_with_the_highest_code_its_ranks_reported():
    """torchrun exits 1 when any rank exits non-zero; `--nproc` used to pass that 1 on."""
    launcher = [sys.executable, "-c", REPORTING_LAUNCHER]
    assert run_job([*launcher, "76", "75"], dict(os.environ)) == ExitCode.REQUEUE_REFUSED
    assert run_job([*launcher, "75", "75"], dict(os.environ)) == ExitCode.PREEMPTED
    assert run_job([*launcher, "0", "0"], dict(os.environ)) == ExitCode.FINISHED


def test_exit_codes_read_like_a_shells():
    assert [exit_code(c) for c in (0, 1, -15, -9)] == [0, 1, 143, 137]


def test_the_supervisor_relays_sigterm_to_the_ranks_and_exits_with_their_code(tmp_path):
    job = Job(tmp_path, ["-c", SUPERVISOR, str(tmp_path / "marks"), LAUNCHER])
    try:
        job.wait_until(lambda: len(job.pids("rank")) == 2, "two ranks", timeout=60)
        (launcher,) = child_pids(job.proc.pid)
        assert sorted(child_pids(launcher)) == job.pids("rank")
        sent = job.send(signal.SIGTERM, group=True)  # the group: only the supervisor is in it
        assert job.finish(timeout=30) == 0, job.err_tail()
        record("supervisor relay (stand-in launcher)", signal_to_exit=time.monotonic() - sent)
        assert len(list(job.marks.glob("saved.*"))) == 2  # each rank got it once, and saved
        assert "SIGTERM passed on to the ranks" in job.err()
        assert not alive(launcher) and job.survivors() == []
    finally:
        job.cleanup()


@pytest.mark.dist
@pytest.mark.slow
def test_sigterm_to_the_nproc_parent_saves_on_every_rank_and_exits_preempted(tmp_path):
    """Before: the parent died at once (exit -15) and torchrun and both ranks trained on;
    then it exited 0, as if the run had finished (issue 27: the ranks' 75, not torchrun's 1)."""
    cfg = write_config(tmp_path)
    job = Job(tmp_path, cadence("train", str(cfg), "--nproc", "2"))
    try:
        job.wait_for("rank0.iter3", timeout=180)
        job.wait_for("rank1.iter3")
        (torchrun,) = child_pids(job.proc.pid)
        sent = job.send(signal.SIGTERM)  # the parent alone, as `kill PID` does
        code = job.finish(timeout=90)
        took = time.monotonic() - sent
        record("SIGTERM to the --nproc 2 parent", signal_to_exit=took)
        assert code == ExitCode.PREEMPTED, job.err_tail()
        assert took < 30
        assert "SIGTERM passed on to the ranks" in job.err()
        work = tmp_path / "work"
        saved = (work / "last_checkpoint").read_text().strip()
        assert saved.startswith("preempted_iter_") and read_manifest(str(work / saved))
        assert not alive(torchrun) and job.survivors() == []
    finally:
        job.cleanup()
    iters = int(saved[len("preempted_iter_") : -len(".pth")])
    again = write_config(tmp_path, name="resume.py",
                         train_cfg=dict(by_epoch=False, max_iters=iters + 1))  # fmt: skip
    resumed = Job(tmp_path, cadence("train", str(again), "--resume"), name="resume")
    try:
        assert resumed.finish(timeout=120) == 0, resumed.err_tail()
        log = "".join(p.read_text() for p in work.glob("*/*.log"))
        assert f"Resumed from {work / saved}" in log
    finally:
        resumed.cleanup()


@pytest.mark.dist
@pytest.mark.slow
def test_ctrl_c_to_the_nproc_group_stops_every_rank_and_the_parent_waits_for_them(tmp_path):
    """Ctrl-C signals the terminal's process group. The parent alone is in it (torchrun has
    a session of its own), relays SIGINT once to the ranks and exits only after them.
    Before: the parent SIGKILLed torchrun and returned 130 without waiting for the ranks."""
    cfg = write_config(tmp_path)
    job = Job(tmp_path, cadence("train", str(cfg), "--nproc", "2"))
    try:
        job.wait_for("rank0.iter3", timeout=180)
        job.wait_for("rank1.iter3")
        (torchrun,) = child_pids(job.proc.pid)
        sent = job.send(signal.SIGINT, group=True)
        code = job.finish(timeout=90)
        took = time.monotonic() - sent
        record("SIGINT to the --nproc 2 group", signal_to_exit=took)
        assert code == 130, job.err_tail()  # the ranks' KeyboardInterrupt: 128 + SIGINT
        assert took < 30
        assert "SIGINT passed on to the ranks" in job.err()
        assert "KeyboardInterrupt" in job.err()
        assert not alive(torchrun) and job.survivors() == []
    finally:
        job.cleanup()
