"""Process start to the end of the first training iteration: cadence against a hand-written loop.

Two child scripts train the same workload: one in plain PyTorch, one through
``Runner`` with its default hooks (logger every 50 iterations, console and log file,
``scalars.json``; no checkpoints). Each child prints the wall-clock time (``time.time()``) at which
its first optimizer step finished; the parent subtracts the time it started
the child, so interpreter start, imports, building and the first step all
count. Each child also prints its CPU time up to then (``time.process_time()``,
the whole process), which a busy machine disturbs far less than wall time.
Workloads (``WORKLOADS``): ``tiny``, the MLP 32->64->10 of ``iteration_overhead.py``
(batch 32, an in-memory ``TensorDataset``), and ``data``, data-bound (4,096 synthetic
images augmented in ``__getitem__``, a small CNN, batch 64) with 0 and with 2 DataLoader
workers. The two scripts alternate case by case for ``--rounds`` rounds; reported are
the medians and the median per-round difference (target: cadence <= hand-written + 0.1 s).

    python benchmarks/start_time.py [--rounds 5] [--cases tiny0 data0 data2]
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

#: The workloads, shared by both scripts: ``(dataset, model, batch size)`` for a name.
#: ``tiny`` is iteration_overhead.py's; ``data`` is data-bound: 4,096 synthetic 3x36x36
#: uint8 images, each cropped to 32x32, flipped and normalised in ``__getitem__``, and a
#: small CNN, so the DataLoader's workers (``--workers``) matter.
WORKLOADS = """
import sys, time, torch, torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset
torch.set_num_threads(1)

class Images(Dataset):
    def __init__(self, n=4096):
        g = torch.Generator().manual_seed(0)
        self.x = torch.randint(0, 256, (n, 3, 36, 36), dtype=torch.uint8, generator=g)
        self.y = torch.randint(0, 10, (n,), generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        top, left = (i * 7) % 5, (i * 3) % 5
        img = self.x[i, :, top:top + 32, left:left + 32].float().div_(255)
        if i % 2:
            img = img.flip(-1)
        return (img - 0.5) / 0.25, self.y[i]

def workload(name):
    g = torch.Generator().manual_seed(0)
    if name == "tiny":
        data = TensorDataset(torch.randn(2048, 32, generator=g),
                             torch.randint(0, 10, (2048,), generator=g))
        return data, lambda: nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10)), 32
    net = lambda: nn.Sequential(
        nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(32, 10))
    return Images(), net, 64

work, name, workers = sys.argv[1], sys.argv[2], int(sys.argv[3])
data, make_net, batch = workload(name)
"""

HAND_WRITTEN = (
    WORKLOADS
    + """
torch.manual_seed(0)
loader = DataLoader(data, batch_size=batch, shuffle=True, drop_last=True, num_workers=workers)
model = make_net()
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
)

CADENCE = (
    WORKLOADS
    + """
from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.runner import Runner

def collate(batch):
    xs, ys = zip(*batch)
    return {"inputs": torch.stack(xs), "data_samples": torch.stack(ys)}

class Net(BaseModel):
    def __init__(self):
        super().__init__()
        self.net = make_net()

    def forward(self, inputs, data_samples=None, mode="tensor"):
        logits = self.net(inputs)
        return {"loss": F.cross_entropy(logits, data_samples)} if mode == "loss" else logits

class First(Hook):
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter == 0:
            print("FIRST", time.time(), time.process_time(), flush=True)

runner = Runner(
    model=Net(), work_dir=work,
    train_dataloader=DataLoader(data, batch_size=batch, shuffle=True, drop_last=True,
                                collate_fn=collate, num_workers=workers),
    train_cfg=dict(by_epoch=False, max_iters=5),
    optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
    default_hooks=dict(logger=dict(type="LoggerHook", interval=50), checkpoint=None),
    randomness=dict(seed=0),
)
runner.register_hook(First())
runner.train()
"""
)

#: (label, workload, DataLoader workers) of each measured case
CASES = (("tiny", "tiny", 0), ("data, 0 workers", "data", 0), ("data, 2 workers", "data", 2))


def first_iteration(script: str, work: str, case: tuple[str, str, int]) -> tuple[float, float]:
    """(wall, CPU) seconds from starting ``python -c script`` to the end of its first iteration
    (CPU: of the main process; DataLoader workers are not counted)."""
    start = time.time()
    argv = [sys.executable, "-c", script, work, case[1], str(case[2])]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
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
    parser.add_argument("--cases", nargs="*", default=[c[1] + str(c[2]) for c in CASES],
                        help="which cases: tiny0 data0 data2 (all by default)")  # fmt: skip
    args = parser.parse_args()
    cases = [c for c in CASES if c[1] + str(c[2]) in args.cases]
    hand: dict[str, list[tuple[float, float]]] = {c[0]: [] for c in cases}
    runner: dict[str, list[tuple[float, float]]] = {c[0]: [] for c in cases}
    with tempfile.TemporaryDirectory() as work:
        for case in cases:  # warm the file cache
            first_iteration(HAND_WRITTEN, work, case)
            first_iteration(CADENCE, os.path.join(work, "warm"), case)
        for index in range(args.rounds):
            for case in cases:
                hand[case[0]].append(first_iteration(HAND_WRITTEN, work, case))
                folder = os.path.join(work, f"{index}-{case[1]}{case[2]}")
                runner[case[0]].append(first_iteration(CADENCE, folder, case))
    print(f"{args.rounds} rounds, process start to the end of the first training iteration "
          f"(target: cadence <= hand-written + 0.1 s)")  # fmt: skip
    figures = {}
    for label, workload, workers in cases:
        h, r = hand[label], runner[label]
        report(f"{label:16s} wall", [x[0] for x in h], [x[0] for x in r])
        report(f"{label:16s} CPU ", [x[1] for x in h], [x[1] for x in r])
        key = "" if workload == "tiny" else f"{workload}{workers}_"
        figures[f"{key}hand_written_wall_s"] = figure([x[0] for x in h], "s")
        figures[f"{key}cadence_minus_hand_wall_s"] = figure(
            [b[0] - a[0] for a, b in zip(h, r)], "s"
        )
        figures[f"{key}cadence_minus_hand_cpu_s"] = figure([b[1] - a[1] for a, b in zip(h, r)], "s")
    write("start_time", figures)


if __name__ == "__main__":
    main()
