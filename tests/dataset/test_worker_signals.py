"""DataLoader workers leave SIGTERM/SIGINT/SIGUSR1 to the main process (issue #18, item 5).

Real workers and real signals: a signal from another process is dropped by the
worker, one from its parent (the DataLoader's shutdown) ends it; a whole
``cadence train`` process group that gets SIGTERM writes its preemption
checkpoint and leaves no worker behind.
"""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time

import pytest
import torch
from signal_runs import Job, alive, cadence, record, write_config
from torch.utils.data import Dataset

from cadence.checkpoint import read_manifest
from cadence.dataset import (
    ShieldedWorkerInit,
    WorkerSeeder,
    build_dataloader,
    dataloader_state_dict,
)
from cadence.utils.exit_codes import ExitCode

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the shield needs sigwaitinfo; the checks read /proc"
)


class Pids(Dataset):
    """Each sample is the pid of the process that loaded it."""

    def __len__(self) -> int:
        return 1000

    def __getitem__(self, index: int) -> int:
        return os.getpid()


def loader(**overrides):
    cfg = dict(
        batch_size=1, num_workers=1, dataset=Pids(),
        sampler=dict(type="DefaultSampler", shuffle=False), collate_fn=lambda batch: batch[0],
    )  # fmt: skip
    cfg.update(overrides)
    return build_dataloader(cfg, seed=7)


def wait_gone(pid: int, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not alive(pid)


def test_workers_get_a_shielded_init_that_keeps_the_seeding():
    built = loader()
    assert isinstance(built.worker_init_fn, ShieldedWorkerInit)
    assert isinstance(built.worker_init_fn.init_fn, WorkerSeeder)
    assert dataloader_state_dict(built)["worker_seed"] == 7  # found through the wrapper
    assert pickle.loads(pickle.dumps(built.worker_init_fn)).init_fn.seed == 7  # spawn-safe
    assert loader(num_workers=0).worker_init_fn is not None  # no workers: nothing to shield
    assert not isinstance(loader(num_workers=0).worker_init_fn, ShieldedWorkerInit)


def test_a_signal_from_another_process_is_dropped_and_the_parents_ends_the_worker():
    it = iter(loader())
    worker = next(it)
    assert worker != os.getpid()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGUSR1):  # from another process,
        subprocess.run([sys.executable, "-c", f"import os; os.kill({worker}, {int(signum)})"],
                       check=True)  # as `kill -TERM -PGID` would  # fmt: skip
    time.sleep(0.3)  # time to die, had the worker not dropped them
    assert alive(worker) and next(it) == worker  # still serving batches
    os.kill(worker, signal.SIGTERM)  # the parent's terminate(): the worker goes at once
    assert wait_gone(worker, 5)
    del it


def test_the_dataloader_shutdown_still_ends_its_workers():
    it = iter(loader(num_workers=2))
    workers = {next(it) for _ in range(4)}
    assert len(workers) == 2
    del it  # the iterator's shutdown
    assert all(wait_gone(pid) for pid in workers)


@pytest.mark.slow
def test_sigterm_to_the_process_group_saves_and_leaves_no_worker(tmp_path):
    """What SLURM and Kubernetes send: the whole group, workers included (before: the
    workers died, the save failed and the run exited 1 without a checkpoint)."""
    loader_cfg = dict(
        batch_size=2, num_workers=2, persistent_workers=True,
        dataset=dict(type="MarkedRamp", marks=str(tmp_path / "marks"), n=64),
        sampler=dict(type="DefaultSampler", shuffle=False),
        collate_fn=dict(type="default_collate"),
    )  # fmt: skip
    cfg = write_config(tmp_path, train_dataloader=loader_cfg)
    job = Job(tmp_path, cadence("train", str(cfg)))
    try:
        job.wait_for("rank0.iter3")
        workers = job.pids("loader")
        assert len(workers) == 2 and job.proc.pid not in workers
        sent = job.send(signal.SIGTERM, group=True)
        code = job.finish(timeout=60)
        took = time.monotonic() - sent
        record("SIGTERM to the group with 2 workers", signal_to_exit=took)
        assert code == ExitCode.PREEMPTED, job.err_tail()  # saved, then stopped
        assert took < 20
        work = tmp_path / "work"
        saved = (work / "last_checkpoint").read_text().strip()
        assert saved.startswith("preempted_iter_") and read_manifest(str(work / saved))
        assert job.survivors() == []
    finally:
        job.cleanup()
    iters = int(saved[len("preempted_iter_") : -len(".pth")])
    again = write_config(tmp_path, name="resume.py", train_dataloader=loader_cfg,
                         train_cfg=dict(by_epoch=False, max_iters=iters + 2))  # fmt: skip
    resumed = Job(tmp_path, cadence("train", str(again), "--resume"), name="resume")
    try:
        assert resumed.finish(timeout=120) == 0, resumed.err_tail()
        log = "".join(p.read_text() for p in work.glob("*/*.log"))
        assert f"Resumed from {work / saved}" in log
        last = torch.load(work / f"iter_{iters + 2}.pth", weights_only=True)
        assert last["meta"]["iter"] == iters + 2
    finally:
        resumed.cleanup()
