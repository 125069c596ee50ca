"""Process start to the end of the first training iteration: cadence against a hand-written loop.

Two child scripts train the tiny workload of ``iteration_overhead.py`` (MLP
32->64->10, batch 32, SGD, an in-memory ``TensorDataset`` through a
``DataLoader``): one in plain PyTorch, one through ``Runner`` with its default
hooks (logger every 50 iterations, console and log file, ``scalars.json``; no
checkpoints). Each child prints the wall-clock time (``time.time()``) at which
its first optimizer step finished; the parent subtracts the time it started
the child, so interpreter start, imports, building and the first step all
count. Each child also prints its CPU time up to then (``time.process_time()``,
the whole process), which a busy machine disturbs far less than wall time.
The two alternate for ``--rounds`` rounds; reported are the medians and the
median per-round difference (target: cadence <= hand-written + 0.5 s).

    python benchmarks/start_time.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from bench_results import figure, write

HAND_WRITTEN = """
import time, torch, torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.set_num_threads(1)
torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
data = TensorDataset(torch.randn(2048, 32, generator=g), torch.randint(0, 10, (2048,), generator=g))
loader = DataLoader(data, batch_size=32, shuffle=True, drop_last=True)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for it, (x, y) in enumerate(loader):
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if it == 0:
        print("FIRST", time.time(), time.process_time(), flush=True)
    if it == 4:
        break
"""

CADENCE = """
import sys, time, torch, torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.runner import Runner
torch.set_num_threads(1)
g = torch.Generator().manual_seed(0)
data = TensorDataset(torch.randn(2048, 32, generator=g), torch.randint(0, 10, (2048,), generator=g))

def collate(batch):
    xs, ys = zip(*batch)
    return {"inputs": torch.stack(xs), "data_samples": torch.stack(ys)}

class MLP(BaseModel):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.net(inputs)
        return {"loss": F.cross_entropy(logits, data_samples)} if mode == "loss" else logits

class First(Hook):
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter == 0:
            print("FIRST", time.time(), time.process_time(), flush=True)

runner = Runner(
    model=MLP(), work_dir=sys.argv[1],
    train_dataloader=DataLoader(data, batch_size=32, shuffle=True, drop_last=True,
                                collate_fn=collate),
    train_cfg=dict(by_epoch=False, max_iters=5),
    optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
    default_hooks=dict(logger=dict(type="LoggerHook", interval=50), checkpoint=None),
    randomness=dict(seed=0),
)
runner.register_hook(First())
runner.train()
"""


def first_iteration(script: str, work: str) -> tuple[float, float]:
    """(wall, CPU) seconds from starting ``python -c script`` to the end of its first iteration."""
    start = time.time()
    out = subprocess.run(
        [sys.executable, "-c", script, work], capture_output=True, text=True, check=True
    )
    stamps = [line.split()[1:] for line in out.stdout.splitlines() if line.startswith("FIRST ")]
    if not stamps:
        raise RuntimeError(f"no FIRST line in the output:\n{out.stdout[-2000:]}")
    return float(stamps[0][0]) - start, float(stamps[0][1])


def report(label: str, hand: list[float], runner: list[float]) -> None:
    diffs = [b - a for a, b in zip(hand, runner)]
    print(f"{label}: hand-written median {statistics.median(hand):.3f} s "
          f"(min {min(hand):.3f}, max {max(hand):.3f}); cadence median "
          f"{statistics.median(runner):.3f} s (min {min(runner):.3f}, max {max(runner):.3f}); "
          f"difference median {statistics.median(diffs):+.3f} s "
          f"(per round: {' '.join(f'{d:+.3f}' for d in diffs)})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    hand: list[tuple[float, float]] = []
    runner: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory() as work:
        first_iteration(HAND_WRITTEN, work)  # warm the file cache
        first_iteration(CADENCE, os.path.join(work, "warm"))
        for index in range(args.rounds):
            hand.append(first_iteration(HAND_WRITTEN, work))
            runner.append(first_iteration(CADENCE, os.path.join(work, str(index))))
    print(f"{args.rounds} rounds, process start to the end of the first training iteration "
          f"(target: cadence <= hand-written + 0.5 s)")  # fmt: skip
    report("wall", [h[0] for h in hand], [r[0] for r in runner])
    report("CPU ", [h[1] for h in hand], [r[1] for r in runner])
    write("start_time", {
        "hand_written_wall_s": figure([h[0] for h in hand], "s"),
        "cadence_minus_hand_wall_s": figure([r[0] - h[0] for h, r in zip(hand, runner)], "s"),
        "cadence_minus_hand_cpu_s": figure([r[1] - h[1] for h, r in zip(hand, runner)], "s"),
    })  # fmt: skip


if __name__ == "__main__":
    main()
