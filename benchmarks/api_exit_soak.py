#!/usr/bin/env python3
"""Soak: many consecutive DDP runs through the Python API (no CLI) under torchrun.

Each run is ``torchrun --nproc_per_node 2 tests/runner/torchrun_api_case.py ok``: build a
runner, train, test and validate, then exit. It counts the runs that exit non-zero or
print anything about termination (``terminate called``, SIGABRT) on stderr, which is what
an unreleased process group used to do at interpreter exit (#18 item 1).

Example::

    python benchmarks/api_exit_soak.py --runs 100
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASE = os.path.join(ROOT, "tests", "runner", "torchrun_api_case.py")
BAD = ("terminate called", "SIGABRT", "Aborted", "core dumped")


def one_run(port: int, work_dir: str) -> tuple[bool, str]:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
           "--master_port", str(port), CASE, "ok", work_dir]  # fmt: skip
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    bad = [word for word in BAD if word in out.stderr]
    ok = out.returncode == 0 and not bad and out.stdout.count("AT EXIT initialized=False") == 2
    return ok, f"exit {out.returncode}, {bad or 'clean stderr'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    sys.path.insert(0, ROOT)
    from cadence.dist.testing import free_port

    failures = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="cadence-soak-") as root:
        for i in range(args.runs):
            ok, what = one_run(free_port(), os.path.join(root, f"run{i}"))
            if not ok:
                failures.append((i, what))
                print(f"run {i}: FAILED ({what})", flush=True)
    took = time.monotonic() - start
    print(f"{args.runs - len(failures)} of {args.runs} runs exited 0 with a clean stderr and "
          f"the process group released ({took / args.runs:.1f} s per run)")  # fmt: skip
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
