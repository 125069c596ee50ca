"""Write a benchmark's figures to ``benchmarks/results/<name>.json``, the history
``compare.py`` reads.

A file holds one run: the machine, the date (UTC), the commit, the command and the
figures. A figure is a median with the spread of the rounds it came from (half of
max - min), the unit and which way is better; ``compare.py`` treats a change within the
spread as noise. Every script in ``benchmarks/`` calls :func:`write` once, at its end.

    from bench_results import figure, write
    write("import_time", {"runner_vs_torch_s": figure(diffs, "s")})
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def figure(rounds: Iterable[float], unit: str, better: str = "lower") -> dict[str, Any]:
    """One figure from the values of its rounds: their median, and half their range as the
    spread (0 for a single round or an exact count)."""
    values = [float(v) for v in rounds]
    if not values:
        raise ValueError("a figure needs at least one round")
    if better not in ("lower", "higher"):
        raise ValueError(f"better must be 'lower' or 'higher', got {better!r}")
    return {
        "value": statistics.median(values),
        "spread": (max(values) - min(values)) / 2,
        "unit": unit,
        "better": better,
        "rounds": values,
    }


def _commit() -> tuple[str, bool]:
    """(commit of the repository, whether its tracked files differ from it)."""
    root = Path(__file__).resolve().parents[1]

    def git(*args: str) -> str:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
        return out.stdout.strip() if out.returncode == 0 else ""

    dirty = bool(git("status", "--porcelain", "--untracked-files=no", "--", "cadence"))
    return git("rev-parse", "--short=12", "HEAD") or "unknown", dirty


def machine() -> dict[str, Any]:
    """What the figures depend on: processor, cores, Python, torch, the load when run."""
    info: dict[str, Any] = {
        "system": platform.system(),
        "machine": platform.machine(),
        "processor": _cpu_model(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
    }
    torch = sys.modules.get("torch")
    if torch is not None:
        info["torch"] = torch.__version__
    if hasattr(os, "getloadavg"):
        info["load_1min"] = round(os.getloadavg()[0], 2)
    return info


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def write(
    name: str,
    figures: Mapping[str, Mapping[str, Any]],
    note: str = "",
    details: Mapping[str, Any] | None = None,
) -> Path:
    """Write ``results/<name>.json`` (replacing the previous run's) and return its path.
    ``details`` (optional, JSON-able) is stored beside the figures; ``compare.py`` reads
    only the figures. ``BENCH_RESULTS`` names another folder (tests, trial runs)."""
    commit, dirty = _commit()
    record = {
        "benchmark": name,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": commit,
        "dirty": dirty,
        "command": " ".join(["python", f"benchmarks/{name}.py", *sys.argv[1:]]),
        "machine": machine(),
        "note": note,
        "figures": {key: dict(value) for key, value in figures.items()},
    }
    if details is not None:
        record["details"] = dict(details)
    folder = Path(os.environ.get("BENCH_RESULTS") or RESULTS)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"figures written to {path}")
    return path
