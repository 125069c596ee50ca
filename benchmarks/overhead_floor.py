"""How much of the tiny workload's overhead any runner with this model contract pays.

Runs the tiny workload of ``iteration_overhead.py`` through the Runner in four
variants, interleaved with the hand-written loop round by round, and prints
each variant's ratio to it:

* ``default``: the default hooks (what ``iteration_overhead.py`` reports).
* ``bare``: no hooks at all; no log lines, so it does less than the hand-written loop.
* ``log-only``: no default hooks; one hook writes the hand-written loop's log
  line every ``--log-interval`` iterations (same format, ``loss.item()`` only
  then). This is the model contract (``BaseModel`` call, data preprocessor,
  ``parse_losses``, optimizer wrapper) and the loop, doing what the baseline does.
* ``log+records``: that hook also records per iteration what the default hooks
  record (``iter``, ``lr``, ``data_time``, ``time``, ``eta``, ``loss`` into the
  message hub through its writers), in one function per stage: the least a
  hook system can do to keep mmengine's per-step records.

The gap between ``log+records`` and ``default`` is what the default hooks'
structure costs (seven hook calls, their checks, the scheduler and preemption
checks, the logger's interval check); the gap between ``log-only`` and 1.0 is
what the contract costs before any hook.

    python benchmarks/overhead_floor.py [--iters 2000] [--rounds 9] [--log-interval 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Callable
from time import perf_counter
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import iteration_overhead as bench  # noqa: E402

from cadence.hooks import Hook  # noqa: E402


class MinimalHook(Hook):
    """The hand-written loop's log line; with ``record``, also mmengine's per-step records."""

    priority = "VERY_HIGH"

    def __init__(self, interval: int, record: bool) -> None:
        self.interval, self.record = interval, record
        self._hub: Any = None
        self._writers: tuple[Callable[[Any], None], ...] = ()
        self._last = 0.0
        self._total, self._done = 0.0, 0

    def before_train(self, runner: Any) -> None:
        self._last = perf_counter()

    def _take_writers(self, hub: Any) -> None:
        self._hub = hub
        self._writers = (
            hub.info_writer("iter"),
            hub.scalar_writer("train/lr"),
            hub.scalar_writer("train/data_time"),
            hub.scalar_writer("train/time"),
            hub.info_writer("eta"),
            hub.scalar_writer("train/loss"),
        )

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        if self.record:
            if runner.message_hub is not self._hub:
                self._take_writers(runner.message_hub)
            set_iter, write_lr, write_data_time = self._writers[:3]
            set_iter(runner.iter)
            write_lr(runner.optim_wrapper.optimizer.param_groups[0]["lr"])
            write_data_time(perf_counter() - self._last)

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        done = runner.iter + 1
        if self.record:
            now = perf_counter()
            elapsed, self._last = now - self._last, now
            self._total += elapsed
            self._done += 1
            _, _, _, write_time, set_eta, write_loss = self._writers
            write_time(elapsed)
            set_eta(self._total / self._done * (runner.max_iters - done))
            write_loss(outputs["loss"])
        if done % self.interval == 0:
            lr = runner.optim_wrapper.optimizer.param_groups[0]["lr"]
            runner.logger.info(
                "Iter [%d/%d] lr: %.4e loss: %.4f", done, runner.max_iters, lr,
                outputs["loss"].item(),
            )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--log-interval", type=int, default=bench.LOG_INTERVAL)
    cli = parser.parse_args()
    torch.set_num_threads(1)
    base = dict(dim=32, hidden=64, batch=32, log_interval=cli.log_interval, progress=None)
    with_defaults = argparse.Namespace(**base, without=[])
    without_all = argparse.Namespace(**base, without=["all"])
    data = bench.make_data(32 * 64, 32, 10)

    def variant(args: argparse.Namespace, hook: Callable[[], list[Hook]]) -> Any:
        return lambda iters, sink: bench.with_runner(data, args, iters, sink, hook())

    variants = {
        "default": variant(with_defaults, list),
        "bare": variant(without_all, list),
        "log-only": variant(without_all, lambda: [MinimalHook(cli.log_interval, False)]),
        "log+records": variant(without_all, lambda: [MinimalHook(cli.log_interval, True)]),
    }
    ratios: dict[str, list[float]] = {name: [] for name in variants}
    with open(os.devnull, "w") as sink:
        bench.hand_written(data, with_defaults, 200, sink)
        for run in variants.values():
            run(200, sink)
        for _ in range(cli.rounds):
            hand = bench.hand_written(data, with_defaults, cli.iters, sink).wall
            for name, run in variants.items():
                ratios[name].append(run(cli.iters, sink).wall / hand)
    print(f"tiny workload, {cli.iters} iters x {cli.rounds} rounds; wall-clock ratio to the "
          f"hand-written loop (median of rounds; spread)")  # fmt: skip
    for name, values in ratios.items():
        print(f"  {name:12s} {statistics.median(values):.3f}  "
              f"({min(values):.3f}-{max(values):.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
