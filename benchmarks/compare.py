"""Run the benchmarks and print each figure beside the last committed one.

Each benchmark writes ``benchmarks/results/<name>.json`` (``bench_results.py``); this
script runs the chosen ones (all of :data:`SUITE` by default), then compares every
figure with the same file as committed at ``--against`` (default ``HEAD``): the change,
and the noise, the larger of the two runs' spreads (half the range of their rounds, at
least 0.05 % of the committed value: the precision the table prints). A
figure worse by more than the noise is flagged ``REGRESSION`` and the exit status is 1.
Absolute times (s, ms, us) recorded on another machine (processor or CPU count) are
shown but not judged ("other machine"): a slower CPU is not a regression. Ratios
against a baseline of the same run, and counts, are judged on any machine.
Commit the new files with the change that moved them.

    python benchmarks/compare.py                          # the suite, ~5 min on 2 cores
    python benchmarks/compare.py import_time iteration_overhead
    python benchmarks/compare.py --no-run                 # compare the files as they are
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

#: benchmark -> arguments compare.py runs it with (the suite, in the order run).
SUITE: dict[str, list[str]] = {
    "import_time": ["--rounds", "7"],
    "start_time": ["--rounds", "5"],
    "iteration_overhead": ["--rounds", "7", "--no-others"],
    "iteration_profile": ["--iters", "600"],
}
#: benchmarks run only when named (long, needing extras such as moto, mmengine or two
#: processes, or not writing results/ yet: they are then reported as giving no figures).
ON_REQUEST: dict[str, list[str]] = {
    "config_load": [],
    "checkpoint_io": ["--reps", "5"],
    "hook_cost": [],
    "resume_position": ["--rounds", "5"],
    "overhead_floor": [],
    "ddp_overhead": [],
    "dataset_worker_memory": [],
    "remote_checkpoint": [],
    "api_exit_soak": ["--runs", "5"],
    "mmengine_coverage": [],
    "openmmlab_speed": ["--rounds", "3"],
    "openmmlab_configs": [],
    "openmmlab_parity": [],
}


@dataclass
class Row:
    """One figure of one benchmark, before and now."""

    benchmark: str
    figure: str
    unit: str
    old: float | None
    new: float | None
    noise: float
    verdict: str  # "REGRESSION", "better", "same", "new", "gone", "other machine"

    @property
    def change(self) -> float | None:
        """Relative change, new / old - 1 (None without both, or from 0)."""
        if self.old is None or self.new is None or self.old == 0:
            return None
        return self.new / self.old - 1


#: The smallest relative change that counts: below it the table prints 0.0 %, so a
#: single-round figure (spread 0) that moved in its last digits is "same", not flagged.
RESOLUTION = 0.0005
#: Units of absolute times: comparable only between runs on the same machine.
TIME_UNITS = frozenset({"s", "ms", "us"})


def same_machine(old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
    """Whether two records come from the same kind of machine (processor, CPU count);
    a record without a machine (older files) counts as the same."""
    a, b = (old or {}).get("machine"), (new or {}).get("machine")
    if not a or not b:
        return True
    return all(a.get(key) == b.get(key) for key in ("processor", "cpus"))


def judge(old: dict[str, Any] | None, new: dict[str, Any] | None) -> tuple[float, str]:
    """(noise, verdict) for one figure: worse by more than the noise is a regression."""
    if old is None:
        return float(new["spread"]) if new else 0.0, "new"
    if new is None:
        return float(old["spread"]), "gone"
    noise = max(float(old.get("spread", 0)), float(new.get("spread", 0)),
                RESOLUTION * abs(float(old["value"])))  # fmt: skip
    delta = float(new["value"]) - float(old["value"])
    if new.get("better", "lower") == "higher":
        delta = -delta
    if delta > noise:
        return noise, "REGRESSION"
    if delta < -noise:
        return noise, "better"
    return noise, "same"


def machine_name(record: dict[str, Any] | None) -> str:
    """'<processor>, <n> CPUs' of a record's machine."""
    machine = (record or {}).get("machine") or {}
    return f"{machine.get('processor', '?')}, {machine.get('cpus', '?')} CPUs"


def compare_records(name: str, old: dict[str, Any] | None, new: dict[str, Any]) -> list[Row]:
    """The rows of one benchmark: every figure of ``new`` and of ``old`` (committed)."""
    old_figs = (old or {}).get("figures", {})
    new_figs = new.get("figures", {})
    comparable = same_machine(old, new)
    rows = []
    for key in [*new_figs, *(k for k in old_figs if k not in new_figs)]:
        before, now = old_figs.get(key), new_figs.get(key)
        noise, verdict = judge(before, now)
        unit = (now or before or {}).get("unit", "")
        if not comparable and unit in TIME_UNITS and verdict in ("REGRESSION", "better"):
            verdict = "other machine"
        rows.append(Row(name, key, unit, before and before["value"], now and now["value"],
                        noise, verdict))  # fmt: skip
    return rows


def committed(name: str, rev: str) -> dict[str, Any] | None:
    """``results/<name>.json`` as committed at ``rev``, or None where it was not."""
    path = (HERE / "results" / f"{name}.json").relative_to(ROOT).as_posix()
    out = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"],
                         capture_output=True, text=True)  # fmt: skip
    return json.loads(out.stdout) if out.returncode == 0 else None


def current(name: str) -> dict[str, Any] | None:
    path = HERE / "results" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def run(name: str, args: list[str]) -> bool:
    """Run one benchmark (its output goes to this terminal); whether it succeeded."""
    print(f"=== {name} {' '.join(args)}", flush=True)
    done = subprocess.run([sys.executable, str(HERE / f"{name}.py"), *args], cwd=ROOT)
    return done.returncode == 0


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def print_rows(rows: list[Row]) -> None:
    print(f"\n{'benchmark':20s} {'figure':34s} {'committed':>10s} {'now':>10s} "
          f"{'change':>8s} {'noise':>8s}  verdict")  # fmt: skip
    for r in rows:
        change = "-" if r.change is None else f"{r.change:+.1%}"
        noise = f"{r.noise / abs(r.old):.1%}" if r.old else _fmt(r.noise)
        print(f"{r.benchmark:20s} {r.figure + ' (' + r.unit + ')':34s} {_fmt(r.old):>10s} "
              f"{_fmt(r.new):>10s} {change:>8s} {noise:>8s}  {r.verdict}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", help=f"benchmarks (default: {' '.join(SUITE)})")
    parser.add_argument("--against", default="HEAD", help="commit to compare with")
    parser.add_argument("--no-run", action="store_true", help="compare the files as they are")
    args = parser.parse_args(argv)
    known = {**SUITE, **ON_REQUEST}
    names = args.names or list(SUITE)
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {sorted(known)}")
    rows: list[Row] = []
    failed = []
    for name in names:
        if not args.no_run and not run(name, known[name]):
            failed.append(name)
            continue
        new = current(name)
        if new is None:
            failed.append(name)
            continue
        before = committed(name, args.against)
        if not same_machine(before, new):
            print(f"{name}: committed on {machine_name(before)}, run on {machine_name(new)}: "
                  "absolute times are shown, not judged")  # fmt: skip
        rows.extend(compare_records(name, before, new))
    print_rows(rows)
    if failed:
        print(f"no figures from: {', '.join(failed)}")
    regressions = [r for r in rows if r.verdict == "REGRESSION"]
    if regressions:
        print(f"{len(regressions)} figure(s) worse than {args.against} beyond the noise")
    return 1 if regressions or failed else 0


if __name__ == "__main__":
    sys.exit(main())
