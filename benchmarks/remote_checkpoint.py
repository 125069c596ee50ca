#!/usr/bin/env python3
"""Benchmark: a checkpoint saved to object storage versus a plain upload of its bytes.

Starts moto's S3 server on a local port (as the tests do) and prints interleaved
medians (with min-max) of, for a ~100 MB run (50 MB of weights + 50 MB of SGD
momentum):

(a) ``Runner.save_checkpoint`` to an ``s3://`` folder: written and checksummed in
    the staging folder, fsynced, then uploaded (file, manifest, pointer), versus a
    plain ``s3fs`` ``put_file`` of a file of the same bytes; target <= 1.2;
(b) the training stall of the same save with ``async_=True`` (snapshot to CPU;
    write and upload on a background thread) versus the synchronous save;
    target <= 0.10.

Example::

    python benchmarks/remote_checkpoint.py --reps 5
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable

import torch
from checkpoint_io import Regressor, Vectors, config, interleave, stats

from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests"))  # fmt: skip
from s3_server import s3_server  # noqa: E402


def bench(root: str, reps: int) -> None:
    with s3_server() as s3:
        bucket = s3.bucket()
        os.environ["CADENCE_STAGING_DIR"] = os.path.join(root, "staging")
        big = dict(type="Regressor", dim=2048, hidden=2048, layers=2)  # ~12.6M params = 50 MB
        loop = dict(type="IterBasedTrainLoop", max_iters=1)
        runner = Runner(**config(os.path.join(root, "work"), big, n=4, batch=4, train_cfg=loop))
        runner.train()  # one step: momentum buffers exist
        plain_file = os.path.join(root, "plain.pth")
        torch.save(runner.strategy.checkpoint_state(runner.trained), plain_file)
        mb = os.path.getsize(plain_file) / 2**20
        fs = s3.fs()
        counter = iter(range(10**6))

        def timed(fn: Callable[[str], object]) -> float:
            name = f"bench_{next(counter)}.pth"
            start = time.perf_counter()
            fn(name)
            elapsed = time.perf_counter() - start
            runner.wait_for_checkpoint()
            return elapsed

        def put(name: str) -> None:
            fs.put_file(plain_file, f"{bucket}/plain/{name}")

        def sync(name: str) -> None:
            runner.save_checkpoint(f"{bucket}/run", name)

        def async_(name: str) -> None:
            runner.save_checkpoint(f"{bucket}/run", name, async_=True)

        async_("warmup.pth")
        runner.wait_for_checkpoint()
        times = interleave(reps, {
            "s3fs put_file": lambda: timed(put),
            "runner sync save": lambda: timed(sync),
            "runner async stall": lambda: timed(async_),
        })  # fmt: skip
    print(f"checkpoint of {mb:.0f} MB to moto's S3 server, {reps} interleaved reps, "
          "torch threads 1")  # fmt: skip
    for name, values in times.items():
        print(f"  {name:20s} {stats(values)}")
    med = {k: statistics.median(v) for k, v in times.items()}
    sync_s = med["runner sync save"]
    print(f"  (a) sync save+upload / s3fs put     = {sync_s / med['s3fs put_file']:.2f}"
          "   (target <= 1.2)")  # fmt: skip
    print(f"  (b) async stall / sync save+upload  = {med['runner async stall'] / sync_s:.3f}"
          "   (target <= 0.10)")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    DATASETS.register_module(module=Vectors, force=True)
    MODELS.register_module(module=Regressor, force=True)
    root = tempfile.mkdtemp(prefix="cadence-remote-bench-")
    try:
        bench(root, args.reps)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
