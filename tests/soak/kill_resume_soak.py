"""The kill soak (issue #27), run by ``.ci/run`` after the test suite: ``--trials`` torchrun
jobs (``--max-restarts 3``, 2 ranks, gloo on CPU) each lose one rank to a SIGKILL at a
drawn point (between iterations, between the micro-batches of an accumulated step,
inside a checkpoint save), resume by themselves and must end bit for bit where an
uninterrupted job ends (tests/kill_trials.py).

The schedule comes from ``--seed`` (a new one each run unless given) and is printed
first, with the command that replays a failed trial alone. Exit 0 when every trial
passed, 1 when one failed or the time budget ran out before all had run.

    python tests/soak/kill_resume_soak.py [--trials 20] [--seed S] [--only K] [--budget 1200]
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(TESTS)]

import kill_trials  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None, help="the schedule's (else drawn)")
    parser.add_argument("--only", type=int, default=None, help="replay this trial (0-based) alone")
    parser.add_argument("--budget", type=float, default=1200.0, help="seconds for all trials")
    parser.add_argument("--keep", type=Path, default=None, help="keep the trials' folders here")
    args = parser.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    trials = kill_trials.draw(seed, args.trials)
    chosen = [args.only] if args.only is not None else list(range(len(trials)))
    print(f"kill soak: seed {seed}, {len(chosen)} of {len(trials)} trial(s)", flush=True)
    for k in chosen:
        print(f"  trial {k}: SIGKILL {trials[k]}", flush=True)
    root = args.keep or Path(tempfile.mkdtemp(prefix="cadence-kill-soak-"))
    started = time.monotonic()
    failed: list[int] = []
    try:
        _, took = kill_trials.run_job(root / "reference")
        reference = kill_trials.final_state(root / "reference" / "work")
        print(f"uninterrupted job: {took:.0f} s", flush=True)
        for done, k in enumerate(chosen):
            left = args.budget - (time.monotonic() - started)
            if left <= 0:
                print(f"FAILED: the budget of {args.budget:.0f} s ran out after {done} "
                      f"trial(s); {len(chosen) - done} not run", flush=True)  # fmt: skip
                return 1
            try:
                took = kill_trials.run_trial(root / f"trial{k}", trials[k], reference,
                                             timeout=min(300.0, left + 60))  # fmt: skip
            except (AssertionError, Exception) as e:  # a hang (timeout) fails the trial too
                failed.append(k)
                print(f"trial {k} FAILED ({trials[k]}): {str(e)[-3000:]}\n  replay: python "
                      f"tests/soak/kill_resume_soak.py --seed {seed} --trials {args.trials} "
                      f"--only {k} --keep DIR", flush=True)  # fmt: skip
                continue
            print(f"trial {k} ok in {took:.0f} s: {trials[k]}", flush=True)
    finally:
        if args.keep is None and not failed:
            shutil.rmtree(root, ignore_errors=True)
    total = time.monotonic() - started
    if failed:
        print(f"kill soak FAILED: trial(s) {failed} of seed {seed} (folders in {root})")
        return 1
    print(f"kill soak passed: {len(chosen)} trial(s) of seed {seed} in {total:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
