"""Python work per training iteration: cadence's Runner against the hand-written loop.

Timings on a small shared machine swing by a few percent between rounds, which
is the size of the differences that matter for ``iteration_overhead.py``. This
script counts instead: it runs both loops of that benchmark (same workload,
default hooks, a log line every 50 iterations) under ``sys.settrace`` and
reports, per iteration, the Python bytecode instructions executed and the
Python function calls, in total and per function. The counts are the same on
every run of the same code, so a change to the per-iteration path shows up
exactly; ``--top`` lists the functions that execute the most instructions
beyond the hand-written loop. Each loop runs twice, ``--iters`` and 100
iterations, and the difference is divided by ``--iters - 100``: what is done
once per run (building the runner, the first batch) cancels out.

Instruction counts are a proxy for time, not a measure of it: on the reference
machine one extra bytecode instruction costs about 0.04 us inside a training
iteration, and code that runs only once per iteration costs more per
instruction than its micro-benchmark suggests (instruction-cache misses).

    python benchmarks/iteration_profile.py [--iters 1000] [--top 25] [--without HOOK ...]
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
from collections.abc import Callable
from typing import Any

import iteration_overhead as bench
import torch
from bench_results import figure, write

Key = tuple[str, str]
Counter = collections.Counter


def _where(code: Any) -> Key:
    path = code.co_filename
    for marker in ("site-packages/", "/cadence/", "/benchmarks/"):
        if marker in path:
            path = marker.strip("/") + "/" + path.split(marker, 1)[1]
            break
    return path, code.co_name


def count(run: Callable[..., Any], *args: Any) -> tuple[Counter, Counter]:
    """(bytecode instructions, calls) per function while ``run(*args)`` executes."""
    ops: Counter = collections.Counter()
    calls: Counter = collections.Counter()

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        key = _where(frame.f_code)
        if event == "opcode":
            ops[key] += 1
        elif event == "call":
            frame.f_trace_opcodes = True
            calls[key] += 1
        return tracer

    sys.settrace(tracer)
    try:
        run(*args)
    finally:
        sys.settrace(None)
    return ops, calls


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iters", type=int, default=1000)
    parser.add_argument("--top", type=int, default=25, help="functions to list")
    parser.add_argument("--without", nargs="*", default=[], metavar="HOOK",
                        help="default hooks to leave out (or 'all')")  # fmt: skip
    args = parser.parse_args()
    args.dim, args.hidden, args.batch = 32, 64, 32
    args.progress, args.log_interval = None, bench.LOG_INTERVAL
    torch.set_num_threads(1)
    data = bench.make_data(args.batch * 64, args.dim, 10)
    base = 100
    if args.iters <= base:
        raise SystemExit(f"--iters must be more than {base}")
    with open(os.devnull, "w") as sink:
        results = {}
        for name, loop in (("hand-written", bench.hand_written), ("cadence", bench.with_runner)):
            loop(data, args, 50, sink)  # warm-up: imports and first calls
            short_ops, short_calls = count(loop, data, args, base, sink)
            ops, calls = count(loop, data, args, args.iters, sink)
            ops.subtract(short_ops)
            calls.subtract(short_calls)
            results[name] = ops, calls
    n = args.iters - base
    (hand_ops, hand_calls), (ops, calls) = results["hand-written"], results["cadence"]
    print(f"workload: MLP 32->64->10, batch 32, {n} iterations counted, default hooks"
          + (f" without {' '.join(args.without)}" if args.without else ""))  # fmt: skip
    for name, (o, c) in results.items():
        print(f"{name:12s} {sum(o.values()) / n:8.1f} bytecode instructions/iter, "
              f"{sum(c.values()) / n:6.1f} Python calls/iter")  # fmt: skip
    extra = sum(ops.values()) - sum(hand_ops.values())
    print(f"cadence - hand-written: {extra / n:+.1f} instructions/iter "
          f"({extra / max(sum(hand_ops.values()), 1):+.1%}), "
          f"{(sum(calls.values()) - sum(hand_calls.values())) / n:+.1f} calls/iter")  # fmt: skip
    if not args.without:
        write("iteration_profile", {
            "hand_written_instructions": figure([sum(hand_ops.values()) / n], "instr/iter"),
            "cadence_extra_instructions": figure([extra / n], "instr/iter"),
            "cadence_extra_calls": figure(
                [(sum(calls.values()) - sum(hand_calls.values())) / n], "calls/iter"),
        })  # fmt: skip
    rows = sorted(set(ops) | set(hand_ops), key=lambda k: hand_ops[k] - ops[k])[: args.top]
    print(f"\n{'instr/iter':>10} {'calls/iter':>10}  function (beyond the hand-written loop)")
    for key in rows:
        more = (ops[key] - hand_ops[key]) / n
        if more > 0:
            print(f"{more:10.1f} {(calls[key] - hand_calls[key]) / n:10.2f}  {key[0]}:{key[1]}")


if __name__ == "__main__":
    main()
