"""Helpers of the OpenMMLab compat tests: run a project's tool in a fresh interpreter, read
the losses of a run. The tools live in tests/compat/data/<project>/tools (unmodified)."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

from fresh_python import run_python

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "compat" / "data"
STANDINS = ROOT / "tests" / "compat" / "standins"
DOOR = ("-m", "cadence.compat.mmengine")


def project_config(package: str, relative: str) -> Path:
    """A config shipped in ``package``'s wheel (found, not imported: it imports mmengine)."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.origin, f"{package} is not installed (see README)"
    return Path(spec.origin).parent / ".mim" / "configs" / relative


def run(cwd: Path, *args: str, compiled_mmcv: bool = True, expect: int = 0) -> str:
    """``python ARGS`` in ``cwd``; ``compiled_mmcv``: with the stand-in for mmcv's ops."""
    paths = [str(ROOT), str(STANDINS), str(cwd)]
    if compiled_mmcv:
        paths.insert(1, str(STANDINS / "compiled_mmcv"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    result = run_python(args, cwd=cwd, env=env, timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode == expect, output[-4000:]
    return output


def losses(work_dir: Path) -> list[float]:
    """Every training iteration's ``loss`` that the runs in ``work_dir`` logged, in order."""
    found = []
    for scalars in sorted(work_dir.glob("*/vis_data/scalars.json")):
        for line in scalars.read_text().splitlines():
            record = json.loads(line)
            if "loss" in record:
                found.append(record["loss"])
    return found
