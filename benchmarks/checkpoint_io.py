#!/usr/bin/env python3
"""Benchmark: checkpoint save cost, async-save stall and resume time.

Prints interleaved medians (with min-max) of:

(a) a synchronous save through ``Runner.save_checkpoint`` (strategy state,
    checksummed while written, fsync, rename, manifest, pointer) of a ~100 MB
    run (50 MB of weights + 50 MB of SGD momentum) versus a plain
    ``torch.save`` of the same state dict, and versus ``torch.save`` + fsync
    (the same durability); target: ratio to plain ``torch.save`` <= 1.1;
(b) the training stall of ``save_checkpoint(..., async_=True)`` (snapshot to
    CPU; the write runs on a background thread) versus the synchronous save
    time; target <= 0.05;
(c) the time from ``before_run`` to the end of the first iteration when
    resuming at iteration 100,000 versus at iteration 10 (same mid-epoch
    position, a later epoch); target ratio <= 1.1 (no replay);
(d) the verification of the saved checkpoint before a resume reads it (its
    manifest's digest against the bytes) versus reading the file once.

The figures go to ``benchmarks/results/checkpoint_io.json`` (per-rep ratios, so
their spread is the rounds' own).

Everything is written under a temporary directory. Example::

    python benchmarks/checkpoint_io.py --reps 7
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from bench_results import figure, write
from torch import nn
from torch.utils.data import Dataset

from cadence.checkpoint import atomic_torch_save, verify_checkpoint
from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner


class Vectors(Dataset):
    def __init__(self, n: int = 64, dim: int = 16) -> None:
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, dim, generator=g)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"inputs": self.x[i], "data_samples": self.x[i].sum()}


class Regressor(BaseModel):
    def __init__(self, dim: int = 16, hidden: int = 16, layers: int = 1) -> None:
        super().__init__()
        self.inp = nn.Linear(dim, hidden)
        self.body = nn.Sequential(*[nn.Linear(hidden, hidden) for _ in range(layers)])
        self.out = nn.Linear(hidden, 1)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        y = self.out(self.body(self.inp(inputs))).squeeze(-1)
        if mode == "loss":
            return {"loss": F.mse_loss(y, data_samples)}
        return y


class StopAfterFirstIter(Hook):
    """Times before_run -> end of the first iteration, then stops the run."""

    priority = "HIGHEST"

    def __init__(self) -> None:
        self.started = self.elapsed = 0.0

    def before_run(self, runner: Any) -> None:
        self.started = time.perf_counter()

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        self.elapsed = time.perf_counter() - self.started
        raise _Stop


class _Stop(Exception):
    pass


def config(work_dir: str, model: dict[str, Any], n: int, batch: int, **extra: Any) -> dict:
    cfg = dict(
        model=model,
        work_dir=work_dir,
        train_dataloader=dict(
            batch_size=batch,
            dataset=dict(type="Vectors", n=n, dim=model.get("dim", 16)),
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),  # fmt: skip
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=1e-4, momentum=0.9)),
        default_hooks=dict(
            checkpoint=dict(type="CheckpointHook", interval=-1, save_last=False),
            logger=dict(type="LoggerHook", interval=10**9),
        ),
        log_level="WARNING",
        randomness=dict(seed=0),
    )
    cfg.update(extra)
    return cfg


def stats(values: list[float]) -> str:
    low, high = min(values) * 1e3, max(values) * 1e3
    return f"{statistics.median(values) * 1e3:8.1f} ms  (min {low:.1f}, max {high:.1f})"


def interleave(reps: int, cases: dict[str, Callable[[], float]]) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in cases}
    names = list(cases)
    for r in range(reps):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            out[name].append(cases[name]())
    return out


def bench_save(root: str, reps: int) -> dict[str, Any]:
    work = os.path.join(root, "save")
    big = dict(type="Regressor", dim=2048, hidden=2048, layers=2)  # ~12.6M params = 50 MB
    runner = Runner(**config(work, big, n=4, batch=4,
                             train_cfg=dict(type="IterBasedTrainLoop", max_iters=1)))  # fmt: skip
    runner.train()  # one step: momentum buffers exist
    state = runner.strategy.checkpoint_state(runner.trained)
    mb = sum(v.numel() * v.element_size() for v in runner.model.state_dict().values()) * 2 / 2**20
    counter = iter(range(10**6))

    def timed(fn: Callable[[str], Any]) -> float:
        path = os.path.join(work, f"bench_{next(counter)}.pth")
        start = time.perf_counter()
        fn(path)
        elapsed = time.perf_counter() - start
        runner.wait_for_checkpoint()
        for name in os.listdir(work):
            if name.startswith("bench_"):
                os.remove(os.path.join(work, name))
        return elapsed

    def plain(path: str) -> None:
        torch.save(state, path)

    def plain_fsync(path: str) -> None:
        with open(path, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())

    def atomic(path: str) -> None:
        atomic_torch_save(state, path)

    def sync(path: str) -> None:
        runner.save_checkpoint(work, os.path.basename(path))

    def async_(path: str) -> None:
        runner.save_checkpoint(work, os.path.basename(path), async_=True)

    async_(os.path.join(work, "warmup_async.pth"))  # first snapshot allocates its buffers
    runner.wait_for_checkpoint()
    times = interleave(reps, {
        "torch.save": lambda: timed(plain),
        "torch.save+fsync": lambda: timed(plain_fsync),
        "atomic_torch_save": lambda: timed(atomic),
        "runner sync save": lambda: timed(sync),
        "runner async stall": lambda: timed(async_),
    })  # fmt: skip
    print(f"(a/b) state of {mb:.0f} MB, {reps} interleaved reps, torch threads 1")
    for name, values in times.items():
        print(f"  {name:20s} {stats(values)}")
    med = {k: statistics.median(v) for k, v in times.items()}
    sync_s, stall = med["runner sync save"], med["runner async stall"]
    plain_s = med["torch.save"]
    print(f"  (a) sync save / torch.save          = {sync_s / plain_s:.2f}   (target <= 1.1)")
    print(f"      sync save / torch.save+fsync    = {sync_s / med['torch.save+fsync']:.2f}")
    print(f"  (b) async stall / sync save         = {stall / sync_s:.3f}   (target <= 0.05)")
    fsynced, syncs = times["torch.save+fsync"], times["runner sync save"]
    figures = {
        "sync_save_vs_torch_save_fsync": figure([a / b for a, b in zip(syncs, fsynced)], "x"),
        "async_stall_vs_sync_save": figure(
            [a / b for a, b in zip(times["runner async stall"], syncs)], "x"
        ),
        "torch_save_fsync_ms": figure([v * 1e3 for v in fsynced], "ms"),
        "runner_sync_save_ms": figure([v * 1e3 for v in syncs], "ms"),
    }
    return {**figures, **bench_verify(work, runner, reps)}


def bench_verify(work: str, runner: Any, reps: int) -> dict[str, Any]:
    """(d): verifying a saved checkpoint against reading its bytes once."""
    runner.save_checkpoint(work, "verify.pth")
    path = os.path.join(work, "verify.pth")

    def read_once() -> float:
        start = time.perf_counter()
        with open(path, "rb", buffering=0) as f:
            while f.read(16 << 20):
                pass
        return time.perf_counter() - start

    def verify() -> float:
        start = time.perf_counter()
        assert verify_checkpoint(path) is not None
        return time.perf_counter() - start

    times = interleave(reps, {"read the file": read_once, "verify_checkpoint": verify})
    print(f"(d) verification before a resume, {reps} interleaved reps (page cache warm)")
    for name, values in times.items():
        print(f"  {name:20s} {stats(values)}")
    ratios = [a / b for a, b in zip(times["verify_checkpoint"], times["read the file"])]
    print(f"  (d) verify / read                   = {statistics.median(ratios):.2f}")
    return {
        "verify_ms": figure([v * 1e3 for v in times["verify_checkpoint"]], "ms"),
        "verify_vs_read": figure(ratios, "x"),
    }


def bench_resume(root: str, reps: int) -> dict[str, Any]:
    small = dict(type="Regressor", dim=16, hidden=64, layers=2)
    first = os.path.join(root, "resume_source")
    hooks = dict(
        checkpoint=dict(type="CheckpointHook", interval=10, by_epoch=False, save_last=False),
        logger=dict(type="LoggerHook", interval=10**9),
    )
    Runner(**config(first, small, n=1000, batch=10, train_cfg=dict(max_epochs=1),
                    default_hooks=hooks)).train()  # fmt: skip
    at_10 = os.path.join(first, "iter_10.pth")
    ckpt = torch.load(at_10, weights_only=True)
    loop = ckpt["loops"]["train"]
    epochs = 1000  # 100 iterations per epoch: iteration 100,010 is the same spot, 1000 epochs on
    loop.update(epoch=loop["epoch"] + epochs, iter=loop["iter"] + 100 * epochs)
    sampler = loop.get("dataloader", {}).get("sampler")
    if sampler is not None and "epoch" in sampler:
        sampler["epoch"] += epochs
    ckpt["meta"].update(epoch=loop["epoch"], iter=loop["iter"])
    at_100k = os.path.join(first, "iter_100010.pth")
    atomic_torch_save(ckpt, at_100k)

    def resume(path: str) -> float:
        work = tempfile.mkdtemp(dir=root)
        timer = StopAfterFirstIter()
        runner = Runner(**config(work, small, n=1000, batch=10, train_cfg=dict(max_epochs=2000),
                                 resume=path, custom_hooks=[timer]))  # fmt: skip
        try:
            runner.train()
        except _Stop:
            pass
        assert runner.iter in (10, 100010), runner.iter
        shutil.rmtree(work, ignore_errors=True)
        return timer.elapsed

    resume(at_10)  # warm-up
    times = interleave(reps, {"resume at 10": lambda: resume(at_10),
                              "resume at 100,010": lambda: resume(at_100k)})  # fmt: skip
    print(f"(c) before_run -> end of the first iteration after resuming, {reps} interleaved reps")
    for name, values in times.items():
        print(f"  {name:20s} {stats(values)}")
    ratio = statistics.median(times["resume at 100,010"]) / statistics.median(times["resume at 10"])
    print(f"  (c) resume at 100,010 / at 10       = {ratio:.2f}   (target <= 1.1)")
    far, near = times["resume at 100,010"], times["resume at 10"]
    return {"resume_far_vs_near": figure([a / b for a, b in zip(far, near)], "x")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--dir", default=None, help="parent of the temporary folder")
    parser.add_argument("--only", choices=["save", "resume"], default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    DATASETS.register_module(module=Vectors, force=True)
    MODELS.register_module(module=Regressor, force=True)
    root = tempfile.mkdtemp(prefix="cadence-ckpt-bench-", dir=args.dir)
    figures: dict[str, Any] = {}
    try:
        if args.only in (None, "save"):
            figures.update(bench_save(root, args.reps))
        if args.only in (None, "resume"):
            figures.update(bench_resume(root, args.reps))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    write("checkpoint_io", figures, note=f"--only {args.only}" if args.only else "")


if __name__ == "__main__":
    main()
