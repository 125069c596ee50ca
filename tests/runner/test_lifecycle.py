"""The runner releases what its strategy set up: at exit after train/test/val through the
Python API under torchrun, and at once (no barrier) when a call raises on one rank."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from cadence.dist.testing import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = os.path.join(HERE, "torchrun_api_case.py")


def torchrun_case(mode: str, work_dir: str) -> tuple[subprocess.CompletedProcess, float]:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
           "--master_port", str(free_port()), CASE, mode, work_dir]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    start = time.monotonic()
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240, env=env)
    return out, time.monotonic() - start


@pytest.mark.dist
def test_train_test_val_through_the_api_release_the_group_at_exit(tmp_path):
    out, _ = torchrun_case("ok", str(tmp_path))
    assert out.returncode == 0, out.stderr[-4000:]
    assert "terminate called" not in out.stderr
    assert out.stdout.count("MODEL CadenceDistributedDataParallel") == 2
    assert "METRICS rank=0 True" in out.stdout and "METRICS rank=1 True" in out.stdout
    # the runner's exit handler ran first (registered later) and destroyed the group
    assert out.stdout.count("AT EXIT initialized=False") == 2, out.stdout


@pytest.mark.dist
def test_a_rank_that_raises_releases_without_a_barrier_and_does_not_hang_its_peer(tmp_path):
    out, seconds = torchrun_case("fail", str(tmp_path))
    assert out.returncode != 0
    assert "rank one failed in test" in out.stderr
    assert "METRICS" not in out.stdout
    # the process-group timeout is 300 s: a rank waiting in a barrier would hold the job
    assert seconds < 120, f"{seconds:.0f} s"


ZYGOTE = os.path.join(HERE, "api_exit_zygote.py")
RUNS = 10  # benchmarks/api_exit_soak.py runs 100 under torchrun itself


# Not in the serial `dist` group (22 s there, on the suite's longest path): two processes at
# a time with generous timeouts, so it can share the CPUs with the tests on the other worker.
@pytest.mark.slow
def test_consecutive_api_runs_exit_cleanly(tmp_path):
    """Ten DDP runs (train, test, val) through the Python API, one after another, each rank in
    a process that finalises normally: every one exits 0, prints nothing about termination
    and has released its process group before the interpreter's teardown.

    Each rank is a fork of a per-rank process that imported torch once (what torchrun
    would start afresh costs 3-6 s per run); the environment is the one torchrun sets.
    ``benchmarks/api_exit_soak.py`` runs the full 100 under torchrun itself.
    """
    ports = ",".join(str(free_port()) for _ in range(RUNS))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    ranks = [
        subprocess.Popen([sys.executable, ZYGOTE, str(rank), ports, str(tmp_path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        for rank in (0, 1)
    ]  # fmt: skip
    try:
        outputs = [rank.communicate(timeout=300) for rank in ranks]
    finally:
        for rank in ranks:
            rank.kill()
    for rank, (stdout, stderr) in enumerate(outputs):
        assert ranks[rank].returncode == 0, stderr[-3000:]
        statuses = [line.split()[2] for line in stdout.splitlines() if line.startswith("RUN ")]
        assert statuses == ["0"] * RUNS, stdout
    for run in range(RUNS):
        for rank in (0, 1):
            out, err = (tmp_path.joinpath(f"run{run}.rank{rank}.{s}").read_text()
                        for s in ("out", "err"))  # fmt: skip
            assert "terminate called" not in err and "Abort" not in err, (run, rank, err[-2000:])
            assert f"METRICS rank={rank} True" in out, (run, rank, out)
            assert out.rstrip().endswith("AT EXIT initialized=False"), (run, rank, out[-500:])


def test_close_frees_the_wrapped_model_before_it_destroys_the_group(tmp_path, monkeypatch):
    """DDP's reducer holds the process group: freed after the group's destruction (right
    after the barrier), the group's destructor could join a gloo worker that was still
    freeing the barrier and waited for the GIL: a hang at exit, seen under load. The
    wrapped model must go while the group is alive (torch's registry keeps it)."""
    import gc
    import weakref

    import torch.distributed as torch_dist
    from runner_toys import toy_config, train_counting

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    for key, value in dict(
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(free_port()),
        RANK="0",
        LOCAL_RANK="0",
        WORLD_SIZE="1",
        LOCAL_WORLD_SIZE="1",
    ).items():
        monkeypatch.setenv(key, value)  # fmt: skip
    runner, _ = train_counting(
        toy_config(tmp_path, 1, launcher="pytorch", strategy=dict(type="DDPStrategy"))
    )
    group_alive_when_freed = []
    weakref.finalize(runner.model, lambda: group_alive_when_freed.append(
        torch_dist.is_initialized()))  # fmt: skip
    assert type(runner.model).__name__ == "CadenceDistributedDataParallel"
    runner.close()
    gc.collect()
    assert group_alive_when_freed == [True]
    assert not torch_dist.is_initialized()


def test_one_device_keeps_the_model_a_failed_train_leaves(tmp_path):
    """As in mmengine, the model and optimizer wrapper a failed ``train()`` leaves are
    still the runner's on one device: the strategy, handed them when it is released (the
    failure releases it at once), drops only what is tied to a process group."""
    from runner_toys import toy_config

    from cadence.hooks import Hook
    from cadence.runner import Runner

    class FailOnSecondIter(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            if batch_idx == 1:
                raise RuntimeError("stop here")

    runner = Runner.from_cfg(toy_config(tmp_path, 1))
    runner.register_hook(FailOnSecondIter())
    with pytest.raises(RuntimeError, match="stop here"):
        runner.train()
    assert not runner.processes.ready  # released on the error
    model, wrapper = runner.trained.model, runner.trained.optim_wrapper
    assert model is not None and wrapper is not None
    assert runner.model is model and runner.optim_wrapper is wrapper
