"""DDP, 2 ranks on gloo (CPU): per-iteration time of cadence's Runner against a hand-written loop.

Workload and fairness as in ``iteration_overhead.py`` (same model, data,
collate function, SGD, a log line every 50 iterations to the console sink and
a log file), with each rank reading its half of the data through a shuffling
``DistributedSampler`` and the model wrapped in ``DistributedDataParallel``:

* hand-written: ``DistributedDataParallel(net)``, forward, backward (gradient
  all-reduce), step; rank 0 logs.
* cadence: ``Runner(..., launcher='pytorch', strategy=dict(type='DDPStrategy'))``
  with its default hooks (no checkpoints), timed from ``before_train`` to
  ``after_train``.

Both ranks run inside one process group started by
:func:`cadence.dist.testing.run_distributed`; a warm-up pair runs first, then
``--rounds`` pairs alternate. Reported by rank 0: medians per iteration and
the median per-round ratio (target: <= 1.05), wall and CPU time.

    python benchmarks/ddp_overhead.py [--iters 1000] [--rounds 5] [--medium]
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import tempfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from iteration_overhead import (  # noqa: E402
    LOG_INTERVAL,
    Timing,
    _Clock,
    _now,
    _per_iter,
    close_handlers,
    collate,
    hand_logger,
    make_data,
    make_net,
)
from torch.nn.parallel import DistributedDataParallel  # noqa: E402
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset  # noqa: E402

from cadence.dist.testing import run_distributed  # noqa: E402
from cadence.runner import Runner  # noqa: E402


def make_loader(data: TensorDataset, args: argparse.Namespace) -> DataLoader:
    sampler = DistributedSampler(data, shuffle=True, seed=0)
    return DataLoader(data, batch_size=args.batch, sampler=sampler, drop_last=True,
                      collate_fn=collate)  # fmt: skip


def hand_written(data: TensorDataset, args: argparse.Namespace, iters: int, sink: Any) -> Timing:
    """Seconds per iteration of a plain DDP loop (this rank)."""
    rank = torch.distributed.get_rank()
    torch.manual_seed(0)
    model = DistributedDataParallel(make_net(args))
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = make_loader(data, args)
    with tempfile.TemporaryDirectory() as work:
        logger = hand_logger(sink, work)
        it, epoch = 0, 0
        start = _now()
        while it < iters:
            loader.sampler.set_epoch(epoch)  # type: ignore[attr-defined]
            for batch in loader:
                loss = F.cross_entropy(model(batch["inputs"]), batch["data_samples"])
                opt.zero_grad()
                loss.backward()
                opt.step()
                it += 1
                if it % LOG_INTERVAL == 0 and rank == 0:
                    logger.info("Iter [%d/%d] lr: %.4e loss: %.4f", it, iters, 0.01, loss.item())
                if it == iters:
                    break
            epoch += 1
        end = _now()
        close_handlers(logger)
    return _per_iter(start, end, iters)


def with_runner(data: TensorDataset, args: argparse.Namespace, iters: int, sink: Any) -> Timing:
    """Seconds per iteration of the same training through the Runner with DDPStrategy."""
    # the model class is registered by importing iteration_overhead (BenchMLP)
    with tempfile.TemporaryDirectory() as work, contextlib.redirect_stdout(sink):
        runner = Runner(
            model=dict(type="BenchMLP", dim=args.dim, hidden=args.hidden),
            work_dir=work,
            train_dataloader=make_loader(data, args),
            train_cfg=dict(by_epoch=False, max_iters=iters),
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
            default_hooks=dict(
                logger=dict(type="LoggerHook", interval=LOG_INTERVAL, progress="off"),
                checkpoint=None,
            ),  # fmt: skip
            log_processor=dict(by_epoch=False),
            log_level="INFO",
            launcher="pytorch",
            strategy=dict(type="DDPStrategy"),
            randomness=dict(seed=0),
        )
        clock = _Clock()
        runner.register_hook(clock)
        runner.train()
        close_handlers(logging.getLogger(runner.experiment_name))
    start, end = clock.stamps
    return _per_iter(start, end, iters)


def rank_main(args: argparse.Namespace) -> tuple[list[Timing], list[Timing]]:
    """One rank's share: warm-up, then alternating rounds."""
    torch.set_num_threads(args.threads)
    data = make_data(args.batch * 64 * 2, args.dim, 10)
    hand: list[Timing] = []
    runner: list[Timing] = []
    with open(os.devnull, "w") as sink:
        warm = min(args.iters, 100)
        hand_written(data, args, warm, sink)
        with_runner(data, args, warm, sink)
        for _ in range(args.rounds):
            hand.append(hand_written(data, args, args.iters, sink))
            runner.append(with_runner(data, args, args.iters, sink))
    return hand, runner


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--iters", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--medium", action="store_true", help="MLP 512->2048->10, batch 256")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    args = parser.parse_args()
    args.dim, args.hidden, args.batch = (512, 2048, 256) if args.medium else (32, 64, 32)
    results = run_distributed(rank_main, args, world_size=2, timeout=3000)
    hand, runner = results[0]
    print(f"DDP 2 ranks (gloo), workload: MLP {args.dim}->{args.hidden}->10, batch {args.batch} "
          f"per rank, {args.iters} iters x {args.rounds} rounds, {args.threads} thread(s)/rank "
          "(rank 0's clocks)")  # fmt: skip
    for clock in Timing._fields:
        h = [getattr(t, clock) for t in hand]
        r = [getattr(t, clock) for t in runner]
        ratios = [b / a for a, b in zip(h, r)]
        print(f"{clock:4s}: hand-written {statistics.median(h) * 1e6:8.1f} us/iter, "
              f"cadence {statistics.median(r) * 1e6:8.1f} us/iter, "
              f"ratio {statistics.median(ratios):.3f} (median; per round: "
              f"{' '.join(f'{x:.3f}' for x in ratios)})")  # fmt: skip


if __name__ == "__main__":
    main()
