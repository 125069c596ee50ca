"""The projects' own configs on cadence and on the real mmengine 0.10.7: every logged loss
term of every training iteration compared bit for bit (issue #28 items 3 and 6).

The same ``tools/train.py`` (the project's, kept in tests/compat/data), config, synthetic
data and seed run twice, each in a fresh process: on cadence through door (b),
``python -m cadence.compat.mmengine tools/train.py``, with this interpreter; on mmengine
with the venv of ``benchmarks/mmengine_reference/make_venv.sh --openmmlab VENV``
(mmengine, torch and the OpenMMLab packages, never cadence). The data writers and
``--cfg-options`` are the compat tests' own (tests/compat/test_<project>.py), run longer
(``--iters`` training iterations), with the logger's interval and smoothing window 1 so
that ``vis_data/scalars.json`` holds each iteration's own values. Both sides run with
``MKL_CBWR=COMPATIBLE`` (MKL's code path fixed, as tests/runner/test_mmengine_parity.py).

Cases: mmpretrain ``resnet/resnet18_8xb16_cifar10`` (epoch-based, 2 iterations an epoch),
mmsegmentation ``unet/unet-s5-d16_fcn_4xb4-40k_chase-db1-128x128`` (iteration-based),
mmdetection ``rtmdet/rtmdet_tiny_8xb32-300e_coco`` (epoch-based, 2 iterations an epoch,
EMA, the pipeline switch after epoch 1, a validation with CocoMetric each epoch).

    benchmarks/mmengine_reference/make_venv.sh --openmmlab /tmp/mmref/venv   # once
    python benchmarks/openmmlab_parity.py [--iters 20] [--venv /tmp/mmref/venv] [--only mmseg]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_results import figure, write

ROOT = Path(__file__).resolve().parents[1]
COMPAT = ROOT / "tests" / "compat"
STANDINS = COMPAT / "standins"
#: what an engine logs that is not a result of the training: times, rates, memory
TIMING = {"time", "data_time", "eta", "memory", "samples_per_sec", "tflops"}


@dataclass
class Case:
    """One project config: where its tools are, how to write its data and options."""

    project: str
    config: Callable[[Path], str]  # the config file, given the case's folder
    data: Callable[[Path], Path]  # writes the dataset into the folder; returns its root
    options: Callable[[Path, int], list[str]]  # data root, iterations -> --cfg-options
    compiled_mmcv: bool = True  # with the tests' stand-in for mmcv's compiled ops


def _cases() -> dict[str, Case]:
    """The compat tests' data writers and options (imported from tests/compat)."""
    sys.path[:0] = [str(COMPAT), str(ROOT / "tests")]
    import test_mmdet
    import test_mmpretrain
    import test_mmseg
    from openmmlab_runs import project_config

    def at(name: str, writer: Callable[[Path], None]) -> Callable[[Path], Path]:
        def write_data(folder: Path) -> Path:
            writer(folder / name)
            return folder / name

        return write_data

    def epochs(options: Callable[[Path, int], list[str]]) -> Callable[[Path, int], list[str]]:
        return lambda data, iters: options(data, max(1, iters // 2))  # 2 iterations an epoch

    mmseg_extra = ["train_cfg.val_interval=1000", "default_hooks.checkpoint.interval=1000"]
    # mmengine refuses persistent workers without workers (cadence drops them)
    steady = [
        f"{loader}_dataloader.persistent_workers=False" for loader in ("train", "val", "test")
    ]
    return {
        "mmpretrain": Case(
            "mmpretrain", lambda folder: str(test_mmpretrain._config(folder)),
            at("cifar10", test_mmpretrain._write_cifar10),
            lambda data, iters: epochs(test_mmpretrain._options)(data, iters) + steady,
            compiled_mmcv=False,
        ),
        "mmseg": Case(
            "mmseg", lambda folder: str(project_config("mmseg", test_mmseg.CONFIG)),
            at("CHASE_DB1", test_mmseg._write_chase_db1),
            lambda data, iters: test_mmseg._options(data, iters) + mmseg_extra,
        ),
        "mmdet": Case(
            "mmdet", lambda folder: str(project_config("mmdet", test_mmdet.CONFIG)),
            at("coco", test_mmdet._write_coco), epochs(test_mmdet._options),
        ),
    }  # fmt: skip


def _records(work_dir: Path) -> list[dict[str, Any]]:
    """Every training iteration's logged values (those with a loss), timings left out."""
    found = []
    for scalars in sorted(work_dir.glob("*/vis_data/scalars.json")):
        for line in scalars.read_text().splitlines():
            record = json.loads(line)
            if "loss" in record:
                found.append({k: v for k, v in record.items() if k not in TIMING})
    return found


def _train(case: Case, side: str, python: str, folder: Path, iters: int) -> list[dict[str, Any]]:
    """Run the project's tools/train.py on one engine; return its per-iteration records."""
    data = folder / "data"
    if not data.exists():
        data.mkdir()
        case.data(data)
    root = next(data.iterdir())
    work = folder / side
    paths = [str(STANDINS), str(folder)]
    if case.compiled_mmcv:
        paths.insert(0, str(STANDINS / "compiled_mmcv"))
    door: list[str] = []
    if side == "cadence":
        paths.insert(0, str(ROOT))
        door = ["-m", "cadence.compat.mmengine"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "MKL_CBWR": "COMPATIBLE"}
    options = case.options(root, iters) + ["log_processor.window_size=1"]
    train = COMPAT / "data" / case.project / "tools" / "train.py"
    args = [python, *door, str(train), case.config(folder), "--work-dir", str(work), *options]
    done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(
            f"{case.project} on {side} failed:\n{(done.stdout + done.stderr)[-3000:]}"
        )
    return _records(work)


def _table(name: str, cadence: list[dict[str, Any]], mmengine: list[dict[str, Any]]) -> int:
    """Print the losses side by side; return how many leading iterations agree exactly."""
    terms = sorted({k for r in cadence + mmengine for k in r if "loss" in k})
    print(f"\n{name}: {len(cadence)} iterations on cadence, {len(mmengine)} on mmengine; "
          f"terms {', '.join(terms)}")  # fmt: skip
    equal = 0
    for i, (a, b) in enumerate(zip(cadence, mmengine)):
        same = a == b
        if same and equal == i:
            equal += 1
        shown = "  ".join(f"{k} {a.get(k, float('nan')):.10f}" for k in terms)
        if not same:
            shown += "  | mmengine: " + "  ".join(
                f"{k} {b.get(k, float('nan')):.10f}" for k in terms if a.get(k) != b.get(k)
            )
            shown += f"  (differs: {sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))})"
        print(f"  {i + 1:3d} {'=' if same else '!'} {shown}")
    return equal


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iters", type=int, default=20, help="training iterations per case")
    parser.add_argument("--venv", default="/tmp/mmref/venv", help="mmengine 0.10.7's venv")
    parser.add_argument("--only", choices=("mmpretrain", "mmseg", "mmdet"), action="append")
    args = parser.parse_args()
    venv_python = str(Path(args.venv) / "bin" / "python")
    if not os.path.exists(venv_python):
        sys.exit(f"no venv at {args.venv}: make it with "
                 "benchmarks/mmengine_reference/make_venv.sh --openmmlab VENV")  # fmt: skip
    cases = _cases()
    figures, details = {}, {}
    for name in args.only or list(cases):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            cadence = _train(cases[name], "cadence", sys.executable, folder, args.iters)
            mmengine = _train(cases[name], "mmengine", venv_python, folder, args.iters)
        equal = _table(name, cadence, mmengine)
        whole = equal == len(cadence) == len(mmengine)
        print(f"{name}: {'every' if whole else 'NOT every'} logged value equal "
              f"({equal} of {len(mmengine)} iterations bit for bit)")  # fmt: skip
        figures[f"{name}_iterations_equal"] = figure([equal], "iterations", "higher")
        details[name] = {"cadence": cadence, "mmengine": mmengine, "all_equal": whole}
    write(
        "openmmlab_parity",
        figures,
        details=details,
        note=f"--iters {args.iters}; logged values per training iteration, timings left out",
    )


if __name__ == "__main__":
    main()
