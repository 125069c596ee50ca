"""Resume cost against resume position: time from "position loaded" to the first batch.

An iteration-based run resumed at iteration ``N`` must load batch ``N`` next,
without reading (or generating the indices of) the ``N`` batches before it.
This script builds a fresh shuffling dataloader (``DefaultSampler`` or
``InfiniteSampler``, ``shuffle=True``) over an in-memory toy dataset, positions
it at iteration ``N`` the way ``IterBasedTrainLoop`` does on resume (epoch and
offset for ``DefaultSampler``, an offset into the stream for
``InfiniteSampler``) and times until the first batch comes out. Building the
dataloader is not counted.

Positions (``--iters``, default 10, 100,000 and 10,000,000) are timed
interleaved: each round times every sampler at every position once (in an
order rotated from round to round), so all see the same machine load.
Reported per sampler and position: the median and min-max over ``--rounds``
rounds, and the median of the per-round ratios of each position to the first
one (target: at most about 1, i.e. the cost does not grow with the position).

``DefaultSampler`` turns the rest of the epoch's permutation into a list when
its pass starts, so its time follows the part of the epoch still to come, not
the position: with the defaults iteration 100,000 is 32 batches before the end
of its epoch and comes out cheaper than iteration 10.

    python benchmarks/resume_position.py [--rounds 7] [--iters 10 100000 10000000]
        [--samples 50000] [--batch-size 32] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence

import torch
from torch.utils.data import Dataset

from cadence.dataset import build_dataloader
from cadence.loops.data_position import DataPosition, EndlessIterator

SAMPLERS = ("DefaultSampler", "InfiniteSampler")


class Toy(Dataset):
    """``samples`` zero vectors: loading costs next to nothing, the position is what is timed."""

    def __init__(self, samples: int) -> None:
        self.samples = samples

    def __len__(self) -> int:
        return self.samples

    def __getitem__(self, index: int) -> torch.Tensor:
        return torch.zeros(4)


def first_batch_seconds(sampler: str, iteration: int, samples: int, batch_size: int) -> float:
    """Seconds from positioning a fresh loader at ``iteration`` to its first batch."""
    loader = build_dataloader(
        dict(
            batch_size=batch_size,
            dataset=Toy(samples),
            sampler=dict(type=sampler, shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        seed=0,
    )
    if sampler == "InfiniteSampler":
        epoch, within = 0, iteration
    else:
        epoch, within = divmod(iteration, len(loader))
    start = time.perf_counter()
    position = DataPosition(epoch, within * batch_size)  # one process: samples = batches x size
    batches = EndlessIterator(loader, position, within, keep_rng=True)
    next(iter(batches))
    return time.perf_counter() - start


def measure(
    iters: Sequence[int], rounds: int, samples: int, batch_size: int
) -> dict[tuple[str, int], list[float]]:
    """Per (sampler, position): one time per round, rounds interleaved."""
    times: dict[tuple[str, int], list[float]] = {(s, i): [] for s in SAMPLERS for i in iters}
    for sampler in SAMPLERS:  # warm-up: imports, first allocations
        first_batch_seconds(sampler, iters[0], samples, batch_size)
    for round_ in range(rounds):
        shift = round_ % len(iters)  # rotate the order: no position is always timed first
        for sampler in SAMPLERS:
            for iteration in [*iters[shift:], *iters[:shift]]:
                seconds = first_batch_seconds(sampler, iteration, samples, batch_size)
                times[sampler, iteration].append(seconds)
    return times


def report(times: dict[tuple[str, int], list[float]], iters: Sequence[int]) -> None:
    """Print medians, min-max and the median per-round ratio to the first position."""
    base = iters[0]
    for sampler in SAMPLERS:
        print(sampler)
        reference = times[sampler, base]
        for iteration in iters:
            values = times[sampler, iteration]
            ratio = statistics.median(v / r for v, r in zip(values, reference))
            print(
                f"  iter {iteration:>12,}: median {statistics.median(values) * 1e3:7.2f} ms "
                f"(min {min(values) * 1e3:.2f}, max {max(values) * 1e3:.2f})  "
                f"ratio to iter {base:,}: {ratio:.2f}x"
            )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--iters", type=int, nargs="+", default=[10, 100_000, 10_000_000])
    parser.add_argument("--samples", type=int, default=50_000, help="dataset size")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    print(
        f"first batch after resuming at iteration N: {args.samples:,} samples, batch "
        f"{args.batch_size}, {args.rounds} rounds, {args.threads} thread(s)"
    )
    times = measure(args.iters, args.rounds, args.samples, args.batch_size)
    report(times, args.iters)


if __name__ == "__main__":
    main()
