"""Import time of cadence against ``import torch``, and the optional packages it pulls in.

Each statement runs in a fresh interpreter (``python -c``); the statements
alternate round by round so that they see the same machine load. Reported:
the median wall time of each, the median per-round difference to
``import torch`` (target: <= 0.3 s for ``from cadence.runner import Runner``),
and which optional packages are in ``sys.modules`` afterwards. On a busy
machine the fresh-interpreter times swing by seconds (loading torch's shared
libraries), so the script also measures cadence's own share directly: in a
fresh interpreter that has already imported torch, the wall and CPU time of
``from cadence.runner import Runner`` alone.

    python benchmarks/import_time.py [--rounds 7]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from bench_results import figure, write

STATEMENTS = {
    "torch": "import torch",
    "cadence": "import cadence",
    "runner": "from cadence.runner import Runner",
}

#: Packages a plain runner must not import (heavy, optional, or pulled in by accident).
OPTIONAL = (
    "deepspeed", "tensorboard", "wandb", "mlflow", "matplotlib", "sklearn", "sympy", "rich",
    "yapf", "pandas", "scipy", "PIL",
)  # fmt: skip


def timed(statement: str) -> float:
    """Seconds for a fresh interpreter to run ``statement`` and exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", statement], check=True)
    return time.perf_counter() - start


_INCREMENT = """
import time, torch
wall, cpu = time.perf_counter(), time.process_time()
from cadence.runner import Runner
print(time.perf_counter() - wall, time.process_time() - cpu)
"""


def increment() -> tuple[float, float]:
    """(wall, CPU) seconds of importing the runner once torch is imported."""
    out = subprocess.run([sys.executable, "-c", _INCREMENT], capture_output=True, text=True,
                         check=True)  # fmt: skip
    wall, cpu = out.stdout.split()[-2:]
    return float(wall), float(cpu)


def loaded_optional(statement: str) -> list[str]:
    """The packages of :data:`OPTIONAL` in ``sys.modules`` after ``statement``."""
    probe = f"{statement}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    modules = set(json.loads(out.stdout.strip().splitlines()[-1]))
    return [name for name in OPTIONAL if name in modules]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    for statement in STATEMENTS.values():  # warm the file cache
        timed(statement)
    times: dict[str, list[float]] = {name: [] for name in STATEMENTS}
    extra: list[tuple[float, float]] = []
    for _ in range(args.rounds):
        for name, statement in STATEMENTS.items():
            times[name].append(timed(statement))
        extra.append(increment())
    base = times["torch"]
    print(f"{args.rounds} rounds, fresh interpreter each, {sys.executable}")
    for name, statement in STATEMENTS.items():
        t = times[name]
        diff = [a - b for a, b in zip(t, base)]
        ratio = statistics.median(t) / statistics.median(base)
        print(f"{statement:36s} median {statistics.median(t):6.3f} s "
              f"(min {min(t):.3f}, max {max(t):.3f}); vs import torch: "
              f"{statistics.median(diff):+.3f} s, ratio {ratio:.3f}")  # fmt: skip
    walls, cpus = zip(*extra)
    print(f"from cadence.runner import Runner after import torch: median wall "
          f"{statistics.median(walls):.3f} s, CPU {statistics.median(cpus):.3f} s "
          f"(min {min(walls):.3f} / {min(cpus):.3f})")  # fmt: skip
    optional = []
    for name in ("cadence", "runner"):
        found = loaded_optional(STATEMENTS[name])
        optional += found
        print(f"optional packages after '{STATEMENTS[name]}': {', '.join(found) or 'none'}")
    write("import_time", {
        "torch_s": figure(base, "s"),
        "cadence_s": figure(times["cadence"], "s"),
        "runner_minus_torch_s": figure([a - b for a, b in zip(times["runner"], base)], "s"),
        "runner_after_torch_wall_s": figure(walls, "s"),
        "runner_after_torch_cpu_s": figure(cpus, "s"),
        "optional_packages": figure([len(optional)], "packages"),
    }, note="bytecode cache " + ("off (PYTHONDONTWRITEBYTECODE)" if sys.dont_write_bytecode
                                 else "on"))  # fmt: skip


if __name__ == "__main__":
    main()
