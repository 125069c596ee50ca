"""The resume contract: a run killed with SIGKILL and resumed ends bit for bit where an
uninterrupted run ends.

Each case trains a config in a child process without interruption, trains it again
in the same child and kills the process (SIGKILL) at iteration ``kill_at``, then
resumes it with ``resume=True`` in a fresh child. The final parameters, optimizer
(and GradScaler) state, schedulers, EMA average, early-stopping and best-checkpoint
state, every logged scalar's history (message hub) and the scalars.json lines, and
the final states of torch's, NumPy's and Python's global generators must be equal
(``torch.equal``). The fetch logs show that the resumed run loaded only the batches
after its checkpoint. The configs and the toy data live in ``resume_contract_case``.

Matrix (each case also has a shuffled sampler, augmentation drawn from torch, NumPy and
Python in ``__getitem__``, dropout, BatchNorm, LinearLR + MultiStepLR schedulers):

    loop   checkpoint      workers        AMP / accumulation    hooks            strategy
    epoch  every 4 iters   0, 2           -                     -                single
    epoch  every epoch     2 persistent   -                     val, ES, best    single
    iter   every 4 iters   0 (endless)    bf16                  EMA, val, ES     single
    iter   every 4 iters   2              fp16 + scaler, x2     -                single
    iter   every 3 iters   0              x2 (ckpt mid-window)  -                single
    epoch  every 4 iters   0              -                     -                DDP, FSDP2, ZeRO-2
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
from fresh_python import run_python

HERE = Path(__file__).resolve().parent
BATCH = 4

# loop x workers x AMP x hooks; 24 samples in batches of 4 = 6 iterations per epoch
CASES: dict[str, dict[str, Any]] = {
    # killed before iteration 10 (epoch 1), resumed from iter_8.pth (epoch 1, batch 2)
    "epoch_loop_iter_ckpt_no_workers": dict(
        loop="epoch", length=3, ckpt_interval=4, kill_at=10, workers=0
    ),
    "epoch_loop_iter_ckpt_two_workers": dict(
        loop="epoch", length=3, ckpt_interval=4, kill_at=10, workers=2
    ),
    # epoch checkpoints (validation, early stopping and the best checkpoint follow each),
    # persistent workers; killed in epoch index 2, resumed from epoch_2.pth, whose
    # validation had not run yet when it was written but had finished before the kill
    # (the resumed run takes the state after it from epoch_2.pth.after_val)
    "epoch_loop_epoch_ckpt_val_persistent_workers": dict(
        loop="epoch", length=5, ckpt_interval=1, ckpt_by_epoch=True, kill_at=15, workers=2,
        persistent=True, val=True, patience=3,
    ),
    # iteration loop with an endless sampler, bf16 autocast, EMA, validation every 3
    # iterations and early stopping at iteration 12 (after the kill)
    "iter_loop_bf16_ema_val_no_workers": dict(
        loop="iter", length=16, sampler="InfiniteSampler", ckpt_interval=4, kill_at=10,
        amp="bfloat16", ema=True, val=True, val_interval=3, patience=3,
    ),
    # float16 with a GradScaler, accumulation over 2 iterations, killed between the two
    # (iteration 9) and resumed from the last completed optimizer step (iteration 8)
    "iter_loop_fp16_scaler_accumulation_two_workers": dict(
        loop="iter", length=14, ckpt_interval=4, kill_at=9, amp="float16", accum=2,
        workers=2,
    ),
    # checkpoints every 3 iterations with accumulation over 2: iteration 3 falls between two
    # micro-batches of an optimizer step (the save moves to 4); killed at 5
    "iter_loop_accumulation_ckpt_between_steps": dict(
        loop="iter", length=10, ckpt_interval=3, kill_at=5, accum=2
    ),
}  # fmt: skip


def _run_child(tmp_path: Path, spec: dict[str, Any], phase: str) -> int:
    spec_path = tmp_path / f"{phase}.json"
    spec_path.write_text(json.dumps(dict(spec, phase=phase, out=str(tmp_path))))
    path = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, PYTHONPATH=path, OMP_NUM_THREADS="1")
    code = "import resume_contract_case as c; c.main()"
    proc = run_python(["-c", code, str(spec_path)], env=env, cwd=tmp_path, timeout=300)
    log = tmp_path / f"{phase}.out"
    log.write_text(proc.stdout + proc.stderr)
    if phase == "resume":
        assert proc.returncode == 0, log.read_text()[-6000:]
    return proc.returncode


def run_case(tmp_path: Path, spec: dict[str, Any], ranks: int = 1) -> list[dict[str, Any]]:
    """Run the three trainings of a case; return, per rank, the full and resumed snapshots."""
    code = _run_child(tmp_path, spec, "full_then_kill")
    output = (tmp_path / "full_then_kill.out").read_text()[-6000:]
    assert (tmp_path / "full_rank0.pt").exists(), output
    killed = [tmp_path / f"killed_rank{r}" for r in range(ranks)]
    assert any(k.exists() for k in killed), output
    assert code != 0 and (ranks > 1 or code == -9), output  # died by SIGKILL, no clean exit
    assert not (tmp_path / "part_rank0.pt").exists()
    _run_child(tmp_path, spec, "resume")
    results = []
    for rank in range(ranks):
        full = torch.load(tmp_path / f"full_rank{rank}.pt", weights_only=True)
        resumed = torch.load(tmp_path / f"resumed_rank{rank}.pt", weights_only=True)
        results.append(dict(full=full, resumed=resumed, rank=rank))
    return results


def assert_bitwise_equal(a: Any, b: Any, path: str = "") -> None:
    """Equal structure; tensors ``torch.equal`` with the same dtype; floats equal (NaN == NaN)."""
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype, path
        assert a.shape == b.shape and torch.equal(a, b), f"{path} differs"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a, key=str) == sorted(b, key=str), path
        for key in a:
            assert_bitwise_equal(a[key], b[key], f"{path}/{key}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{path}: {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_bitwise_equal(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), path
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def _train_lines(scalars: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """scalars.json training lines by step, without timings."""
    lines = {}
    for line in scalars:
        if "loss" in line:
            lines[line["step"]] = {
                k: v for k, v in line.items() if "time" not in k and k not in _RATES
            }
    return lines


#: Scalars that depend on the step's wall time (or, for the FLOPs, on the first step).
_RATES = ("eta", "memory", "samples_per_sec", "tflops", "mfu", "tokens_per_sec")


def _val_lines(scalars: list[dict[str, Any]], spec: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """scalars.json validation lines by the iteration they followed, without timings."""
    per_step = spec.get("n", 24) // BATCH if spec["loop"] == "epoch" else 1
    return {
        line["step"] * per_step: {k: v for k, v in line.items() if "time" not in k}
        for line in scalars
        if "accuracy/top1" in line
    }


def _fetches(tmp_path: Path, run: str, rank: int) -> list[int]:
    path = tmp_path / f"fetch_{run}_rank{rank}.log"
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def check_contract(tmp_path: Path, spec: dict[str, Any], result: dict[str, Any]) -> None:
    """Every assertion of the contract for one rank's pair of snapshots."""
    full, resumed, rank = result["full"], result["resumed"], result["rank"]
    start = resumed["start_iter"]
    assert 0 < start < spec["kill_at"], start  # resumed from a checkpoint before the kill
    assert start % spec.get("accum", 1) == 0  # ... at a completed optimizer step
    assert full["position"] == resumed["position"]
    for part in ("model", "optimizer", "schedulers", "hooks", "hub", "rng"):
        assert_bitwise_equal(full[part], resumed[part], part)
    # scalars.json: the resumed run logged exactly the uninterrupted run's lines after `start`
    full_lines = _train_lines(full["scalars"])
    resumed_lines = _train_lines(resumed["scalars"])
    assert resumed_lines, "the resumed run logged no training scalars"
    assert min(resumed_lines) > start
    assert resumed_lines == {s: v for s, v in full_lines.items() if s > start}
    # and validated exactly where the uninterrupted run did after its checkpoint: none that
    # had finished before the kill again (the state after it is in its after-validation file)
    full_vals = _val_lines(full["scalars"], spec)
    assert _val_lines(resumed["scalars"], spec) == {s: v for s, v in full_vals.items() if s > start}
    # the same batches, the same augmented inputs, from the first one after `start`
    assert resumed["indices"] == full["indices"][start:]
    assert_bitwise_equal(full["inputs"][start:], resumed["inputs"], "inputs")
    # no replay: the resumed run loaded only what the uninterrupted run loaded after `start`
    full_fetch = _fetches(tmp_path, "full", rank)
    resumed_fetch = _fetches(tmp_path, "resumed", rank)
    skipped = start * BATCH
    if not spec.get("workers"):  # one process: the exact order
        assert resumed_fetch == full_fetch[skipped:]
    else:  # workers interleave their log lines; both runs prefetch as much at the end
        assert len(resumed_fetch) == len(full_fetch) - skipped
        assert not Counter(resumed_fetch) - Counter(full_fetch)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_killed_run_resumes_bit_for_bit(tmp_path: Path, name: str) -> None:
    spec = CASES[name]
    (result,) = run_case(tmp_path, spec)
    check_contract(tmp_path, spec, result)
    if spec.get("val"):  # early stopping ended both runs at the same, earlier point
        assert result["full"]["hooks"]["EarlyStoppingHook"]["wait_count"] == spec["patience"]
    if spec.get("amp") == "float16":
        scaler = result["full"]["optimizer"]["loss_scaler"]
        assert scaler["scale"] != 2.0**8  # the scale moved, so its state had to be restored


@pytest.mark.slow
@pytest.mark.dist
def test_killed_ddp_run_resumes_bit_for_bit_on_every_rank(tmp_path: Path) -> None:
    spec = dict(loop="epoch", length=3, ckpt_interval=4, kill_at=10, workers=0, ddp=True, n=48)
    results = run_case(tmp_path, spec, ranks=2)
    for result in results:
        check_contract(tmp_path, spec, result)
    r0, r1 = results
    params = [k for k in r0["full"]["model"] if "running_" not in k and "batches_tracked" not in k]
    for key in params:  # DDP keeps the parameters equal (BatchNorm statistics are rank-local)
        assert torch.equal(r0["full"]["model"][key], r1["full"]["model"][key]), key
    # diff_rank_seed: each rank has its own random streams (augmentation, dropout)
    assert not torch.equal(r0["full"]["rng"]["torch"], r1["full"]["rng"]["torch"])


@pytest.mark.slow
@pytest.mark.dist
@pytest.mark.parametrize("strategy", ["fsdp", "deepspeed"])
def test_killed_sharded_run_resumes_bit_for_bit(tmp_path: Path, strategy: str) -> None:
    if strategy == "deepspeed":
        pytest.importorskip("deepspeed", reason="deepspeed not installed (cadence[deepspeed])")
    # BatchNorm statistics are rank-local buffers under FSDP2 and ZeRO (the engines' own
    # checkpoints keep one rank's copy); the runner's checkpoint restores each rank's own
    spec = dict(loop="epoch", length=2, ckpt_interval=4, kill_at=10, ddp=True, n=48,
                strategy=strategy)  # fmt: skip
    for result in run_case(tmp_path, spec, ranks=2):
        check_contract(tmp_path, spec, result)
