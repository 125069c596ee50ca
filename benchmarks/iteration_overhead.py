"""Per-iteration time of cadence's Runner against a hand-written loop, same process.

Tiny workload (issue 9): MLP 32->64->10, batch 32, SGD, in-memory TensorDataset
through a DataLoader, default hooks, a log line every 50 iterations. Runs the two
interleaved ``--rounds`` times and prints the median ratio runner/hand-written.

    python benchmarks/iteration_overhead.py [--iters 2000] [--rounds 3] [--medium]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from cadence.model import BaseModel
from cadence.registry import MODELS
from cadence.runner import Runner


def make_data(n: int, dim: int, classes: int) -> TensorDataset:
    g = torch.Generator().manual_seed(0)
    return TensorDataset(
        torch.randn(n, dim, generator=g), torch.randint(0, classes, (n,), generator=g)
    )


@MODELS.register_module()
class BenchMLP(BaseModel):
    def __init__(self, dim: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, classes))

    def forward(self, inputs, data_samples=None, mode="tensor"):  # type: ignore[no-untyped-def]
        logits = self.net(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        return logits


def hand_written(data: TensorDataset, args: argparse.Namespace) -> float:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(args.dim, args.hidden), nn.ReLU(), nn.Linear(args.hidden, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = DataLoader(data, batch_size=args.batch, shuffle=True, drop_last=True)
    it = 0
    start = time.perf_counter()
    while it < args.iters:
        for x, y in loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            it += 1
            if it % 50 == 0:
                logging.getLogger("bench").info("iter %d loss %.4f", it, loss.item())
            if it == args.iters:
                break
    return (time.perf_counter() - start) / args.iters


def with_runner(data: TensorDataset, args: argparse.Namespace) -> float:
    def collate(batch):  # type: ignore[no-untyped-def]
        xs, ys = zip(*batch)
        return {"inputs": torch.stack(xs), "data_samples": torch.stack(ys)}

    with tempfile.TemporaryDirectory() as work:
        runner = Runner(
            model=dict(type="BenchMLP", dim=args.dim, hidden=args.hidden, classes=10),
            work_dir=work,
            train_dataloader=DataLoader(
                data, batch_size=args.batch, shuffle=True, drop_last=True, collate_fn=collate
            ),  # fmt: skip
            train_cfg=dict(by_epoch=False, max_iters=args.iters),
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
            default_hooks=dict(
                logger=dict(type="LoggerHook", interval=50), checkpoint=None
            ),  # fmt: skip
            log_processor=dict(by_epoch=False),
            randomness=dict(seed=0),
        )
        timings: list[float] = []

        from cadence.hooks import Hook

        class Clock(Hook):
            priority = "LOWEST"

            def before_train(self, runner):  # type: ignore[no-untyped-def]
                timings.append(time.perf_counter())

            def after_train(self, runner):  # type: ignore[no-untyped-def]
                timings.append(time.perf_counter())

        runner.register_hook(Clock())
        runner.train()
        return (timings[1] - timings[0]) / args.iters


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--medium", action="store_true", help="MLP 512->2048->10, batch 256")
    args = parser.parse_args()
    args.dim, args.hidden, args.batch = (512, 2048, 256) if args.medium else (32, 64, 32)
    logging.basicConfig(level=logging.WARNING)
    torch.set_num_threads(torch.get_num_threads())
    data = make_data(args.batch * 64, args.dim, 10)
    hand, runner = [], []
    for _ in range(args.rounds):
        hand.append(hand_written(data, args))
        runner.append(with_runner(data, args))
    h, r = statistics.median(hand), statistics.median(runner)
    print(f"workload: MLP {args.dim}->{args.hidden}->10, batch {args.batch}, {args.iters} iters")
    print(f"hand-written: {h * 1e6:8.1f} us/iter")
    print(f"cadence     : {r * 1e6:8.1f} us/iter")
    print(f"ratio cadence/hand-written: {r / h:.3f}")


if __name__ == "__main__":
    main()
