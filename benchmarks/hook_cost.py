"""What each default hook costs per training iteration, as a share of a hand-written step.

Trains the tiny workload of ``iteration_overhead.py`` for a few iterations through the
Runner (default hooks, checkpoint off), then calls each hook's ``before_train_iter`` /
``after_train_iter`` on its own many times, and one LoggerHook logging event (a line,
``scalars.json``, the log file), and prints microseconds and the share of one
hand-written iteration timed in the same process. Isolated calls miss cache effects
that a real loop has, so read this beside ``iteration_overhead.py --without ...``.

    python benchmarks/hook_cost.py [--calls 20000]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iteration_overhead as bench  # noqa: E402

from cadence.runner import Runner  # noqa: E402


def _per_call(fn: Any, args: tuple[Any, ...], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn(*args)
    return (time.perf_counter() - start) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(1)
    wl = argparse.Namespace(
        dim=32, hidden=64, batch=32, progress=None, without=[], log_interval=bench.LOG_INTERVAL
    )
    data = bench.make_data(wl.batch * 64, wl.dim, 10)
    with open(os.devnull, "w") as sink:
        hand = statistics.median(
            bench.hand_written(data, wl, 1000, sink).cpu * 1e6 for _ in range(args.rounds)
        )
        with tempfile.TemporaryDirectory() as work, contextlib.redirect_stdout(sink):
            runner = Runner(
                model=dict(type="BenchMLP", dim=wl.dim, hidden=wl.hidden),
                work_dir=work,
                train_dataloader=bench.make_loader(data, wl),
                train_cfg=dict(by_epoch=False, max_iters=100),
                optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
                default_hooks=bench._default_hooks(wl, {}),
                log_processor=dict(by_epoch=False),
                randomness=dict(seed=0),
            )
            runner.train()
            batch = next(iter(bench.make_loader(data, wl)))
            outputs = {"loss": torch.tensor(1.0)}
            manager = runner._hooks
            rows: list[tuple[str, str, float]] = []
            stages = (("before_train_iter", (0, batch)), ("after_train_iter", (0, batch, outputs)))
            for stage, stage_args in stages:
                for fn, entry in zip(manager._positional[stage], manager._table[stage]):
                    us = _per_call(fn, (runner, *stage_args), args.calls)
                    rows.append((stage, entry.name, us))
            total = sum(us for _, _, us in rows)
            logger = next(h for h in manager.hooks if type(h).__name__ == "LoggerHook")
            loop = runner.train_loop
            it = logger.interval - 1

            def log_event() -> None:
                loop._iter = it
                logger.after_train_iter(runner, it, batch, outputs)

            event = _per_call(log_event, (), max(args.calls // 100, 50))
    print(f"hand-written iteration: {hand:.1f} us (CPU, median of {args.rounds} x 1000)")
    for stage, name, us in rows:
        print(f"  {stage:18s} {name:20s} {us:6.2f} us  {us / hand:6.2%}")
    amortised = event / logger.interval
    print(f"  one logging event: {event:.1f} us, every {logger.interval} iterations = "
          f"{amortised:.2f} us/iter  {amortised / hand:6.2%}")  # fmt: skip
    share = (total + amortised) / hand
    print(f"default hooks per iteration: {total + amortised:.2f} us = ratio {1 + share:.3f}")


if __name__ == "__main__":
    main()
