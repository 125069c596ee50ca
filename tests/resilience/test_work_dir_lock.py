"""One training run per work dir: a live holder stops the second run, a dead one's lock is
taken over, the lock goes when training ends, killed saves' temporary files are cleared."""

from __future__ import annotations

import glob
import json
import os
import socket
import subprocess
import sys

import pytest
from runner_toys import log_text, toy_config

from cadence.resilience.work_dir_lock import LOCK_NAME, WorkDirLockedError
from cadence.runner import Runner


def cfg(work_dir, **overrides):
    return toy_config(work_dir, n=32, **overrides)


def write_lock(work_dir, **holder):
    os.makedirs(work_dir, exist_ok=True)
    info = {"host": socket.gethostname(), "pid": 1, "started": "2026-01-01T00:00:00",
            "run": "other_run", **holder}  # fmt: skip
    with open(os.path.join(work_dir, LOCK_NAME), "w") as f:
        json.dump(info, f)


@pytest.fixture
def live_process():
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def test_a_second_run_stops_naming_the_live_holder(tmp_path, live_process):
    work = str(tmp_path / "work")
    write_lock(work, pid=live_process.pid)
    with pytest.raises(WorkDirLockedError) as info:
        Runner.from_cfg(cfg(work)).train()
    message = str(info.value)
    assert f"pid {live_process.pid}" in message and "other_run" in message
    assert "--work-dir" in message and LOCK_NAME in message
    assert not glob.glob(os.path.join(work, "*.pth"))  # nothing was written
    assert json.load(open(os.path.join(work, LOCK_NAME)))["pid"] == live_process.pid


def test_a_holder_on_another_host_is_never_taken_over(tmp_path):
    work = str(tmp_path / "work")
    write_lock(work, host="other-node-17", pid=os.getpid() + 1)
    with pytest.raises(WorkDirLockedError, match="on other-node-17.*delete"):
        Runner.from_cfg(cfg(work)).train()


def test_a_dead_holders_lock_is_taken_over_and_released_at_the_end(tmp_path):
    work = str(tmp_path / "work")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    write_lock(work, pid=dead.pid)
    runner = Runner.from_cfg(cfg(work))
    runner.train()
    assert "no longer running" in log_text(runner) and "other_run" in log_text(runner)
    assert not os.path.exists(os.path.join(work, LOCK_NAME))  # given back
    Runner.from_cfg(cfg(work, resume=True, train_cfg=dict(max_epochs=2))).train()  # free again


def test_the_lock_is_given_back_when_training_raises(tmp_path):
    work = str(tmp_path / "work")
    bad = cfg(work, optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.05, nonsense=1)))
    with pytest.raises(Exception, match="nonsense"):
        Runner.from_cfg(bad).train()
    assert not os.path.exists(os.path.join(work, LOCK_NAME))


def test_temporary_files_of_a_killed_save_are_removed_at_the_next_start(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    for name in (".ckpt-abc.tmp", ".manifest-x.tmp", ".last-y.tmp"):
        (work / name).write_bytes(b"half")
    (work / "notes.tmp").write_text("a user's file")
    runner = Runner.from_cfg(cfg(str(work)))
    runner.train()
    assert sorted(p.name for p in work.glob("*.tmp")) == ["notes.tmp"]
    assert "Removed" in log_text(runner) and ".ckpt-abc.tmp" in log_text(runner)


def test_runs_started_in_the_same_second_get_their_own_log_folders(tmp_path, monkeypatch):
    import time

    second_of_both = time.struct_time((2026, 1, 2, 3, 4, 5, 4, 2, 0))
    monkeypatch.setattr(time, "localtime", lambda *a: second_of_both)
    first = Runner.from_cfg(cfg(tmp_path / "w"))
    first.train()
    second = Runner.from_cfg(cfg(tmp_path / "w", resume=True, train_cfg=dict(max_epochs=2)))
    second.train()
    assert os.path.basename(first.log_dir) == "20260102_030405"
    assert os.path.basename(second.log_dir) == "20260102_030405_2"


def test_cadence_train_exits_2_with_one_paragraph(tmp_path, live_process, capsys, blobs):
    from cadence.cli import main

    work = str(tmp_path / "work")
    write_lock(work, pid=live_process.pid)
    config = os.path.join("examples", "blobs", "configs", "mlp_8xb64_blobs.py")
    assert main(["train", config, "--work-dir", work]) == 2
    err = capsys.readouterr().err
    assert "is in use by another training run" in err and "Traceback" not in err


def test_a_restarted_job_takes_over_its_previous_attempts_lock_on_another_host(tmp_path):
    """A requeued SLURM job (or a torchrun restart) may put rank 0 on another machine: the
    lock of the same job's earlier attempt is taken over; any other holder there is not."""
    from cadence.resilience.cluster import Attempt
    from cadence.resilience.work_dir_lock import WorkDirLock

    def attempt(job: str, restarts: int) -> Attempt:
        return Attempt({"SLURM_RESTART_COUNT": restarts}, {"SLURM_RESTART_COUNT": job})

    work = str(tmp_path / "work")
    write_lock(work, host="other-node-17", pid=12345, attempt=attempt("99", 0).as_record())
    for other in (attempt("100", 1), attempt("99", 0)):  # another job; the same attempt
        with pytest.raises(WorkDirLockedError, match="on other-node-17"):
            WorkDirLock(work, other).acquire("run")
    lock = WorkDirLock(work, attempt("99", 1))
    warning = lock.acquire("run")
    assert "of run other_run (pid 12345 on other-node-17), the previous attempt of this job " \
           "(SLURM_RESTART_COUNT=1)" in warning  # fmt: skip
    assert json.load(open(os.path.join(work, LOCK_NAME)))["attempt"] == {
        "SLURM_RESTART_COUNT": ["99", 1]
    }
    lock.release()


def test_a_refused_run_writes_nothing_into_the_live_runs_work_dir(
    tmp_path, live_process, capsys, blobs
):
    """The refused ``cadence train`` neither rewrites the live run's config dump nor leaves
    a log folder of its own: the lock comes before the first write."""
    from cadence.cli import main

    work = tmp_path / "work"
    write_lock(str(work), pid=live_process.pid)
    (work / "mlp_8xb64_blobs.py").write_text("# the live run's config\n")
    before = sorted(p.name for p in work.iterdir())
    config = os.path.join("examples", "blobs", "configs", "mlp_8xb64_blobs.py")
    assert main(["train", config, "--work-dir", str(work), "--cfg-options", "seed=7"]) == 2
    assert "is in use by another training run" in capsys.readouterr().err
    assert sorted(p.name for p in work.iterdir()) == before
    assert (work / "mlp_8xb64_blobs.py").read_text() == "# the live run's config\n"


def _train_thrice(work_dir: str) -> list[str]:
    """One rank: a fresh run, a second fresh run in the same work dir, then a run that
    only rank 1's launcher counts as restarted (``TORCHELASTIC_RESTART_COUNT=1`` there,
    0 on rank 0: torchrun counts per machine); what each ended with."""
    from runner_toys import register_toys

    from cadence.resilience.work_dir_lock import EarlierRunError

    register_toys()
    ends = []
    for attempt in range(3):
        if attempt == 2:
            os.environ["TORCHELASTIC_RESTART_COUNT"] = str(torch_rank())
        try:
            runner = Runner.from_cfg(cfg(work_dir, launcher="pytorch"))
            runner.train()
            ends.append("resumed" if runner.paths.resumed_from else "trained")
        except EarlierRunError:
            ends.append("refused")
    return ends


def torch_rank() -> int:
    import torch.distributed as dist

    return dist.get_rank()


@pytest.mark.dist
def test_two_ranks_train_are_refused_and_resume_together(tmp_path):
    """The ranks agree on whether the run resumes (a collective) before rank 0 alone asks
    whether the work dir holds an earlier run's checkpoints: a fresh two-rank run trains
    (it once hung in that collective), a second one is refused on both ranks, and a job
    that another machine's launcher counts as restarted resumes (rank 0's own count of
    0 refused it as a fresh run)."""
    from cadence.dist.testing import run_distributed

    ends = run_distributed(_train_thrice, str(tmp_path / "work"), world_size=2, timeout=180)
    assert ends == [["trained", "refused", "resumed"]] * 2
