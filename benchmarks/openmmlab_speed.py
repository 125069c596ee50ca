"""mmpretrain's own tools/train.py on cadence and on the real mmengine 0.10.7, interleaved.

Issue #28 item 9: the same config (``resnet/resnet18_8xb16_cifar10``, shrunk with
``--cfg-options`` as ``tests/compat/test_mmpretrain.py`` does: a synthetic CIFAR-10 in its
on-disk format, the md5 check dropped, ``num_workers=0``), the same seed, one epoch of
``--iters`` iterations of batch ``--batch`` then a short validation and a checkpoint. The
ResNet-18 is ``--width`` 16 channels wide at its first stage (the config's 64 costs ~1.5 s
an iteration on one busy core; the narrower one keeps a run under ~30 s and makes the
engine's own share of an iteration larger, the stricter comparison).
cadence runs it through door (b), ``python -m cadence.compat.mmengine tools/train.py``,
with this interpreter; mmengine with the venv of
``benchmarks/mmengine_reference/make_venv.sh --openmmlab VENV`` (mmengine, torch and the
OpenMMLab packages, never cadence). Rounds alternate cadence, mmengine, cadence, ... each a
fresh process, after one unmeasured warm-up run of each.

Per run: the process wall time (start to exit) and the steady ms/iteration, the median of
the per-iteration ``time`` each engine logs to ``vis_data/scalars.json`` (logger interval
1, smoothing window 1), skipping the first ``--skip`` iterations. Reported: per side the
median and spread (half the range) over rounds, the per-round ratios cadence/mmengine,
and whether a ratio is within the noise (the larger relative spread of the two sides).
The train losses of the two sides are compared too (same seed, same config).

    benchmarks/mmengine_reference/make_venv.sh --openmmlab /tmp/mmref/venv   # once
    python benchmarks/openmmlab_speed.py [--rounds 3] [--iters 80] [--venv /tmp/mmref/venv]
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from bench_results import figure, write

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "tests" / "compat" / "data" / "mmpretrain" / "tools" / "train.py"
STANDINS = ROOT / "tests" / "compat" / "standins"
SIDES = ("cadence", "mmengine")
CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
           "truck"]  # fmt: skip


def write_cifar10(root: Path, train_images: int, test_images: int) -> None:
    """A synthetic CIFAR-10 in the python-pickle layout: five train batches, one test."""
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    sizes = [train_images // 5 + (i < train_images % 5) for i in range(5)] + [test_images]
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    for index, (name, n) in enumerate(zip(names, sizes)):
        batch = {
            "batch_label": name,
            "labels": [(index * 7 + i) % 10 for i in range(n)],
            "data": rng.integers(0, 256, size=(n, 3072), dtype=np.uint8),
            "filenames": [f"{name}_{i}.png" for i in range(n)],
        }
        (folder / name).write_bytes(pickle.dumps(batch))
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": CLASSES}))


def write_config(folder: Path) -> Path:
    """The mmpretrain config (from this interpreter's mmpretrain) plus the md5-check drop."""
    import importlib.util

    spec = importlib.util.find_spec("mmpretrain")  # found, not imported (it imports mmengine)
    if spec is None or not spec.origin:
        sys.exit("mmpretrain is not installed here: pip install --no-deps -r "
                 "requirements/openmmlab.txt (docs/openmmlab.md)")  # fmt: skip
    base = Path(spec.origin).parent / ".mim" / "configs" / "resnet" / "resnet18_8xb16_cifar10.py"
    (folder / "cifar_checksums.py").write_text(
        "from mmpretrain.datasets import CIFAR10\n"
        "CIFAR10.train_list = [[n, None] for n, _ in CIFAR10.train_list]\n"
        "CIFAR10.test_list = [[n, None] for n, _ in CIFAR10.test_list]\n"
        "CIFAR10.meta = {**CIFAR10.meta, 'md5': None}\n"
    )
    cfg = folder / "resnet18_cifar10_bench.py"
    cfg.write_text(
        f"_base_ = [{str(base)!r}]\n"
        "custom_imports = dict(imports=['torchvision_nms_standin', 'cifar_checksums'])\n"
    )
    return cfg


def options(data: Path, batch: int, width: int) -> list[str]:
    """The ``--cfg-options`` both sides get: one epoch, every iteration logged unsmoothed,
    the ResNet-18's stem and first stage ``width`` channels wide (64: the config's own)."""
    loaders = ("train_dataloader", "val_dataloader", "test_dataloader")
    return [
        "--cfg-options",
        *(f"{loader}.dataset.data_root={data}" for loader in loaders),
        *(f"{loader}.num_workers=0" for loader in loaders),
        *(f"{loader}.persistent_workers=False" for loader in loaders),
        *(f"{loader}.batch_size={batch}" for loader in loaders),
        "train_cfg.max_epochs=1", "default_hooks.logger.interval=1",
        "log_processor.window_size=1", "randomness.seed=0",
        f"model.backbone.stem_channels={width}", f"model.backbone.base_channels={width}",
        f"model.head.in_channels={8 * width}",
    ]  # fmt: skip


class Side:
    """How one engine runs the config: interpreter, door, environment."""

    def __init__(self, name: str, python: str, folder: Path, threads: int) -> None:
        self.name = name
        self.python = python
        paths = [str(STANDINS), str(folder)]
        if name == "cadence":
            paths.insert(0, str(ROOT))  # this checkout's cadence, also in subprocesses
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths),
                    "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads),
                    "PYTHONUNBUFFERED": "1"}  # fmt: skip
        self.door = ["-m", "cadence.compat.mmengine"] if name == "cadence" else []

    def check(self, cwd: Path) -> None:
        """The venv has mmengine and mmpretrain and no cadence; cadence's side has cadence."""
        names = ("cadence", "mmengine", "mmpretrain")
        probe = f"import importlib.util as u; print(*[bool(u.find_spec(m)) for m in {names}])"
        out = subprocess.run([self.python, "-c", probe], cwd=cwd, env=self.env,
                             capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
        has = dict(zip(names, (v == "True" for v in out)))
        if self.name == "mmengine" and (has["cadence"] or not has["mmpretrain"]):
            sys.exit(f"{self.python}: needs mmengine and mmpretrain, and no cadence (found "
                     f"{has}); make it with benchmarks/mmengine_reference/make_venv.sh "
                     "--openmmlab VENV")  # fmt: skip
        if self.name == "cadence" and not has["cadence"]:
            sys.exit("cadence is not importable from this checkout")

    def run(self, cfg: Path, work: Path, cwd: Path, extra: list[str], skip: int) -> Measured:
        """Train once in a fresh process; read the child's CPU time (``/proc``) as its console
        shows the train log line of iteration ``skip`` and of the last one."""
        argv = [self.python, *self.door, str(TRAIN), str(cfg), "--work-dir", str(work), *extra]
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, bufsize=1)  # fmt: skip
        cpu_at: dict[int, float] = {}
        tail: deque[str] = deque(maxlen=80)
        assert proc.stdout is not None
        for line in proc.stdout:
            tail.append(line)
            match = TRAIN_LINE.search(line)
            if match:
                cpu_at[int(match.group(1))] = process_cpu(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise RuntimeError(f"{self.name} failed ({proc.returncode}):\n{''.join(tail)}")
        logs = sorted(work.glob("*/vis_data/scalars.json"))
        if not logs:
            raise RuntimeError(f"{self.name}: no */vis_data/scalars.json under {work}")
        records = train_records(logs[-1])
        last = len(records)
        if last <= skip or skip not in cpu_at or last not in cpu_at:
            raise RuntimeError(f"{self.name}: {last} train records, console lines of "
                               f"{len(cpu_at)} iterations; expected more than {skip}")  # fmt: skip
        return Measured(
            wall_s=wall,
            cpu_s=usage.ru_utime + usage.ru_stime,
            ms_per_iter=statistics.median(float(r["time"]) * 1000 for r in records[skip:]),
            cpu_ms_per_iter=(cpu_at[last] - cpu_at[skip]) * 1000 / (last - skip),
            losses=[float(r["loss"]) for r in records],
        )


@dataclass
class Measured:
    """One run's figures: process wall and CPU time, steady wall and CPU ms/iteration."""

    wall_s: float
    cpu_s: float
    ms_per_iter: float
    cpu_ms_per_iter: float
    losses: list[float]


#: a train log line on the console: ``Epoch(train)  [1][ 10/80]  ...`` (both engines)
TRAIN_LINE = re.compile(r"Epoch\(train\)\s*\[\d+\]\[\s*(\d+)/\d+\]")
#: (figure key, label, unit) of what each run measures, in the order printed
MEASURES = (
    ("ms_per_iter", "steady ms/iteration (logged time)", "ms"),
    ("wall_s", "process wall time", "s"),
    ("cpu_ms_per_iter", "steady CPU ms/iteration", "ms"),
    ("cpu_s", "process CPU time", "s"),
)


def process_cpu(pid: int) -> float:
    """User + system CPU seconds so far of the live process ``pid`` (all its threads)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def train_records(scalars: Path) -> list[dict[str, Any]]:
    """The per-iteration training records of a scalars.json (those with a loss)."""
    lines = scalars.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines if line.strip()]
    return [r for r in records if "loss" in r and "time" in r]


def summary(values: list[float]) -> str:
    med = statistics.median(values)
    spread = (max(values) - min(values)) / 2
    return f"{med:.4g} +- {spread:.2g} ({spread / med:.1%})"


def noise(values: list[float]) -> float:
    """Relative spread of one side's rounds: half their range over their median."""
    return (max(values) - min(values)) / 2 / statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="measured runs per side")
    parser.add_argument("--iters", type=int, default=80, help="training iterations (one epoch)")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--skip", type=int, default=10, help="first iterations not counted")
    parser.add_argument("--width", type=int, default=16,
                        help="ResNet-18 base width (the config's 64: ~16x the work)")  # fmt: skip
    parser.add_argument("--val-images", type=int, default=64)
    parser.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS of both sides")
    parser.add_argument("--venv", default="/tmp/mmref/venv", help="mmengine 0.10.7's venv")
    args = parser.parse_args()
    if args.iters <= args.skip + 5:
        parser.error("--iters must exceed --skip by more than 5")
    runs: dict[str, list[Measured]] = {s: [] for s in SIDES}
    losses: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="openmmlab_speed_") as tmp:
        folder = Path(tmp)
        data = folder / "cifar10"
        write_cifar10(data, args.iters * args.batch, args.val_images)
        cfg = write_config(folder)
        extra = options(data, args.batch, args.width)
        venv_python = str(Path(args.venv) / "bin" / "python")
        sides = [Side("cadence", sys.executable, folder, args.threads),
                 Side("mmengine", venv_python, folder, args.threads)]  # fmt: skip
        for side in sides:
            side.check(folder)
        for index in range(-1, args.rounds):  # round -1 warms the file cache, not counted
            for side in sides:
                work = folder / f"{side.name}{index}"
                got = side.run(cfg, work, folder, extra, args.skip)
                if len(got.losses) != args.iters:
                    raise RuntimeError(f"{side.name}: {len(got.losses)} train records, "
                                       f"expected {args.iters}")  # fmt: skip
                print(f"round {index} {side.name:8s}: wall {got.wall_s:6.2f} s (CPU "
                      f"{got.cpu_s:6.2f}), steady {got.ms_per_iter:7.2f} ms/iter (CPU "
                      f"{got.cpu_ms_per_iter:7.2f}){'  warm-up, not counted' if index < 0 else ''}",
                      flush=True)  # fmt: skip
                losses.setdefault(side.name, got.losses)
                if index >= 0:
                    runs[side.name].append(got)
    report(args, runs, losses)


def report(args: argparse.Namespace, runs: dict[str, list[Measured]],
           losses: dict[str, list[float]]) -> None:  # fmt: skip
    """Print the medians, spreads, ratios and the loss check; write the results file."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\n{args.rounds} interleaved rounds, {args.iters} iterations of batch {args.batch} "
          f"(first {args.skip} skipped), width {args.width}, OMP_NUM_THREADS={args.threads}, "
          f"load {load:.1f} on {os.cpu_count()} CPUs (shared machine)")  # fmt: skip
    figures: dict[str, dict[str, Any]] = {}
    verdicts: dict[str, Any] = {}
    for key, label, unit in MEASURES:
        cad = [getattr(r, key) for r in runs["cadence"]]
        mm = [getattr(r, key) for r in runs["mmengine"]]
        ratios = [c / m for c, m in zip(cad, mm)]
        level = max(noise(cad), noise(mm))
        ratio = statistics.median(ratios)
        verdict = ("within the noise" if abs(ratio - 1) <= level
                   else "cadence faster" if ratio < 1 else "cadence SLOWER")  # fmt: skip
        print(f"{label}: cadence {summary(cad)} {unit}, mmengine {summary(mm)} {unit}; "
              f"cadence/mmengine {summary(ratios)} (per round "
              f"{' '.join(f'{r:.3f}' for r in ratios)}), noise {level:.1%}: {verdict}")  # fmt: skip
        figures[f"cadence_{key}"] = figure(cad, unit)
        figures[f"mmengine_{key}"] = figure(mm, unit)
        figures[f"ratio_{key}"] = figure(ratios, "x")
        verdicts[key] = {"ratio": ratio, "noise": level, "verdict": verdict}
    cad_loss, mm_loss = losses["cadence"], losses["mmengine"]
    equal = cad_loss == mm_loss
    worst = max(abs(a - b) for a, b in zip(cad_loss, mm_loss))
    print(f"train losses ({len(cad_loss)} iterations): "
          f"{'equal' if equal else f'DIFFER (largest difference {worst:.3g})'}; "
          f"first {cad_loss[0]:.4f} / {mm_loss[0]:.4f}, last {cad_loss[-1]:.4f} / "
          f"{mm_loss[-1]:.4f} (cadence / mmengine)")  # fmt: skip
    write("openmmlab_speed", figures,
          note="mmpretrain resnet18_8xb16_cifar10 tools/train.py: cadence door (b) vs mmengine "
               f"0.10.7, interleaved fresh processes, load {load:.1f}",
          details={"verdicts": verdicts, "losses_equal": equal, "largest_loss_difference": worst,
                   "iters": args.iters, "batch": args.batch, "width": args.width,
                   "skip": args.skip, "threads": args.threads})  # fmt: skip


if __name__ == "__main__":
    main()
