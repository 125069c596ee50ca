"""Real torchrun jobs on loopback (gloo on CPU, issue #18 items 8 and 11): a
``--max-restarts`` job whose rank was SIGKILLed restarts, resumes by itself from the last
checkpoint and ends with the parameters of an uninterrupted run; two machines resume and
train on bit for bit like one machine's two processes.

The reference of both is one uninterrupted two-process run (12 iterations, a checkpoint
every 4), started by ``run_distributed`` (ranks forked from a process that imported torch
already, gloo over 127.0.0.1) rather than by torchrun, which costs about four times as
much CPU; the elastic job's first checkpoint, written by ``torchrun --nproc-per-node 2``
before the kill, equals the reference's bit for bit, so the two launches train alike.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from signal_runs import Job, cadence, record, write_config

from cadence.config import Config
from cadence.dist.testing import free_port, run_distributed
from cadence.runner import Runner

pytestmark = [
    pytest.mark.dist,
    pytest.mark.skipif(sys.platform != "linux", reason="reads /proc, sends SIGKILL"),
]

ITERS, EVERY = 12, 4
CHECKPOINTS = [f"iter_{n}.pth" for n in range(EVERY, ITERS + 1, EVERY)]


def config(tmp_path: Path, *hooks: dict[str, Any]) -> Path:
    """The tiny DDP run: batch 2 per rank over 64 samples (16 iterations an epoch), so every
    stop and restart falls inside the first epoch."""
    marks = str(tmp_path / "marks")
    return write_config(
        tmp_path, custom_hooks=[dict(type="Pace", marks=marks, delay=0.0), *hooks],
        train_cfg=dict(by_epoch=False, max_iters=ITERS),
        default_hooks=dict(
            logger=dict(type="LoggerHook", progress="off", interval=1000),
            checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=EVERY),
        ),
    )  # fmt: skip


def torchrun(*args: str) -> list[str]:
    return ["-m", "torch.distributed.run", *args]


def train(cfg: Path, *args: str) -> list[str]:
    return cadence("train", str(cfg), "--launcher", "pytorch", *args)


def on_two_nodes(tmp_path: Path, *args: str) -> float:
    """Run ``cadence train args`` as two one-process torchrun "machines" on 127.0.0.1
    (``--nnodes 2 --node-rank 0|1``, static rendezvous); the seconds it took."""
    port = str(free_port())
    nodes = []
    for rank in range(2):
        launch = torchrun("--nnodes", "2", "--node-rank", str(rank), "--nproc-per-node", "1",
                          "--master-addr", "127.0.0.1", "--master-port", port, *args)  # fmt: skip
        nodes.append(Job(tmp_path, launch, name=f"node{rank}"))
    try:
        for node in nodes:
            assert node.finish(timeout=180) == 0, node.err_tail()
        return time.monotonic() - nodes[0].started
    finally:
        for node in nodes:
            node.cleanup()


def training_state(path: Path) -> dict[str, Any]:
    """What must match bit for bit: the weights and the optimizer state."""
    ckpt = torch.load(path, weights_only=True)
    return {"state_dict": ckpt["state_dict"], "optimizer": ckpt["optimizer"]}


def assert_bitwise_equal(a: Any, b: Any, where: str = "") -> None:
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and torch.equal(a, b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            assert_bitwise_equal(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            assert_bitwise_equal(x, y, f"{where}[{i}]")
    else:
        assert a == b, where


def log_of(work: Path) -> str:
    return "".join(p.read_text() for p in sorted(work.glob("*/*.log")))


def _train_config(path: str) -> None:
    """One rank of the reference: what ``cadence train PATH --launcher pytorch`` does."""
    cfg = Config.fromfile(path)
    cfg.launcher = "pytorch"
    Runner.from_cfg(cfg).train()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An uninterrupted run of two processes on one machine; its work dir."""
    tmp = tmp_path_factory.mktemp("reference")
    started = time.monotonic()
    run_distributed(_train_config, str(config(tmp)), world_size=2, timeout=120)
    record("two processes, 12 iterations (run_distributed)", took=time.monotonic() - started)
    assert "DDPStrategy" in log_of(tmp / "work") and "world size 2" in log_of(tmp / "work")
    return tmp / "work"


def test_two_nodes_on_loopback(tmp_path, reference):
    """Two machines (``--nnodes 2 --node-rank 0|1``, one process each) resume from the
    reference's ``iter_4.pth`` (``--resume PATH``) and train iterations 5 to 12 into the
    weights and optimizer state of the reference's ``iter_8`` and ``iter_12``."""
    start = str(reference / "iter_4.pth")
    took = on_two_nodes(tmp_path, *train(config(tmp_path), "--resume", start))
    record("two machines, resume at 4, train to 12", launch_to_exit=took)
    work = tmp_path / "work"
    log = log_of(work)
    assert "DDPStrategy" in log and "world size 2" in log
    assert f"Resumed from {start} at epoch 0, iter 4" in log
    for name in CHECKPOINTS[1:]:
        assert_bitwise_equal(training_state(work / name), training_state(reference / name), name)


@pytest.mark.slow
def test_max_restarts_job_resumes_by_itself_after_a_sigkill(tmp_path, reference):
    """``torchrun --standalone --nproc-per-node 2 --max-restarts 2`` without --resume: rank 0
    (the holder of the work-dir lock) stops after iteration 6 in its first attempt and is
    SIGKILLed; torchrun restarts both ranks, they take over the dead holder's lock, resume
    from iter_4.pth and end with the reference's state; iter_4.pth, written before the kill,
    shows that torchrun's two processes train as the reference's do."""
    marks = str(tmp_path / "marks")
    stall = dict(type="StallAt", marks=marks, at=6, rank=0, attempt=0)
    job = Job(tmp_path, torchrun("--standalone", "--nproc-per-node", "2", "--max-restarts", "2",
                                 *train(config(tmp_path, stall))))  # fmt: skip
    try:
        job.wait_for("stalled.rank0", timeout=120)
        (first,) = job.pids("rank0")
        os.kill(first, signal.SIGKILL)
        killed = time.monotonic()
        job.wait_until(lambda: len(job.pids("rank0")) == 2, "the restarted rank 0")
        resumed = time.monotonic() - killed  # its marker comes after the resume
        assert job.finish(timeout=120) == 0, job.err_tail()
        record("SIGKILL in a --max-restarts 2 job", kill_to_resumed=resumed,
               kill_to_exit=time.monotonic() - killed)  # fmt: skip
    finally:
        job.cleanup()
    work = tmp_path / "work"
    log = log_of(work)
    assert "no longer running" in log and f"pid {first}" in log  # the dead holder's lock
    assert (f"Resumed from {work / 'iter_4.pth'} at epoch 0, iter 4 (auto-resume: restarted "
            "by the launcher (TORCHELASTIC_RESTART_COUNT=1))") in log  # fmt: skip
    for name in CHECKPOINTS:  # iter_4 before the kill, iter_8 and iter_12 after the restart
        assert_bitwise_equal(training_state(work / name), training_state(reference / name), name)
