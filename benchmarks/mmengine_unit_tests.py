"""mmengine unit-test parity: of the tests of mmengine v0.10.7 that mmengine itself passes,
how many pass with cadence under the import alias.

The test files are run unchanged, twice, with pytest in subprocesses (one per test folder,
the heavy folders last), each test phase limited to ``--timeout`` seconds and each side to
``--budget`` seconds:

* the reference: the real mmengine 0.10.7 venv (``mmengine_reference/make_venv.sh``);
* cadence: this interpreter, with the plugin ``mmengine_unit_tests_plugin`` doing
  ``import cadence.compat.mmengine`` before any test module is imported, so each
  ``import mmengine...`` of the tests resolves to cadence (no import is rewritten).

Both sides get the same extra packages (pytest, ``parameterized`` and a setuptools with
``pkg_resources``, installed once with
``pip --target`` into ``--extras`` and put first on ``PYTHONPATH``), no plugin auto-loading,
no GPU (``CUDA_VISIBLE_DEVICES=``), one thread, ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1``
(the ``torch.load`` default that the tests were written for) and the same excluded files
(:data:`EXCLUDED`). A test that needs a package, a GPU or the network that the reference
venv lacks fails or is skipped there, so it is not counted: only tests the reference
passes are. The reference outcomes are cached in
``results/mmengine_unit_tests_reference.json`` (keyed by a hash of the test files and the
options), so a later run needs only the cadence side (``--refresh-reference`` redoes it).

    git --git-dir MIRROR_OF_open-mmlab/mmengine archive v0.10.7 tests | tar -x -C /tmp/mmut
    python benchmarks/mmengine_unit_tests.py --tests /tmp/mmut/tests \\
        [--reference-python /tmp/mmengine-0.10.7/bin/python] [--only tests/test_config]

Prints the tests mmengine passes, how many of them cadence passes, the share, and
cadence's failures grouped by test file and by first error line; writes the figures and
each counted test's outcome to ``results/mmengine_unit_tests.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from bench_results import RESULTS, figure, write  # noqa: E402

REFERENCE_CACHE = RESULTS / "mmengine_unit_tests_reference.json"
#: test files or folders not run on either side, with the reason.
EXCLUDED: dict[str, str] = {
    "tests/data": "data files named test_*.py, not tests",
    "tests/test_hub": "downloads model weights (network)",
}
#: folders run last, slowest last (the rest run in name order before them).
HEAVY = (
    "tests/test_model/test_wrappers",
    "tests/test_strategies",
    "tests/test_dist",
    "tests/test_hooks",
    "tests/test_runner",
)
#: mmengine's ``is_installed`` imports ``pkg_resources``, gone from setuptools >= 81.
EXTRA_PACKAGES = ("parameterized==0.9.0", "setuptools<81")
PYTEST_ARGS = (
    "-q",
    "-p",
    "no:cacheprovider",
    "-p",
    "mmengine_unit_tests_plugin",
    "--tb=native",
    "--continue-on-collection-errors",
)


@dataclass
class Side:
    """One run's outcomes: test id -> (outcome, first error line), and collection errors."""

    outcomes: dict[str, tuple[str, str]] = field(default_factory=dict)
    collect_errors: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "outcomes": {k: list(v) for k, v in sorted(self.outcomes.items())},
            "collect_errors": dict(sorted(self.collect_errors.items())),
            "seconds": round(self.seconds, 1),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Side:
        outcomes = {k: (v[0], v[1]) for k, v in data["outcomes"].items()}
        return cls(outcomes, dict(data["collect_errors"]), float(data.get("seconds", 0)))

    def why_missing(self, test_id: str) -> str:
        """Why a test has no outcome: its file's collection error, else it was not reached."""
        file = test_id.split("::", 1)[0]
        for where, message in self.collect_errors.items():
            if file == where or file.startswith(where.rstrip("/") + "/"):
                return f"collection: {message}"
        return "not run (time budget or killed process)"


def chunks(tests: Path, only: list[str]) -> list[list[str]]:
    """Groups of test files, one per folder, relative to the checkout root; heavy last."""
    root = tests.parent
    files = sorted(p.relative_to(root).as_posix() for p in tests.rglob("test_*.py"))
    files = [f for f in files if not any(f == e or f.startswith(e + "/") for e in EXCLUDED)]
    if only:
        files = [f for f in files if any(f == o or f.startswith(o.rstrip("/") + "/") for o in only)]
    groups: dict[str, list[str]] = {}
    for f in files:
        groups.setdefault(f.rsplit("/", 1)[0], []).append(f)
    order = sorted(groups, key=lambda d: (HEAVY.index(d) + 1 if d in HEAVY else 0, d))
    return [groups[d] for d in order]


def tree_key(tests: Path, args: argparse.Namespace) -> str:
    """A hash of the test files' contents and of the options that change the outcomes."""
    h = hashlib.sha256()
    for p in sorted(tests.rglob("*")):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(p.relative_to(tests).as_posix().encode())
            h.update(p.read_bytes())
    h.update(json.dumps([sorted(EXCLUDED), EXTRA_PACKAGES, args.timeout]).encode())
    return h.hexdigest()[:16]


def ensure_extras(extras: Path) -> None:
    """pytest (this interpreter's version) and the extra packages, into ``extras`` once."""
    if (extras / ".complete").exists():
        return
    import pytest

    cmd = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "-q",
        "--target",
        str(extras),
        f"pytest=={pytest.__version__}",
        *EXTRA_PACKAGES,
    ]
    print("installing the extras both sides share:", " ".join(cmd[4:]), flush=True)
    subprocess.run(cmd, check=True)
    (extras / ".complete").write_text("ok\n")


def side_env(extras: Path, alias: bool, results: Path, timeout: float) -> dict[str, str]:
    paths = [str(extras), str(HERE)] + ([str(ROOT)] if alias else [])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    env.update(
        PYTHONPATH=os.pathsep.join(paths),
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        CUDA_VISIBLE_DEVICES="",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD="1",
        MMUT_RESULTS=str(results),
        MMUT_TIMEOUT=str(timeout),
        MMUT_ALIAS="1" if alias else "0",
    )
    return env


def read_results(path: Path, side: Side) -> list[str]:
    """Merge one chunk's JSON lines into ``side``; return the ids it collected."""
    collected: list[str] = []
    if not path.exists():
        return collected
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut off by a killed process
        if "collected" in rec:
            collected.extend(rec["collected"])
        elif "collect_error" in rec:
            side.collect_errors[rec["collect_error"]] = rec["message"]
        else:
            side.outcomes[rec["id"]] = (rec["outcome"], rec["message"])
    return collected


def run_side(
    name: str,
    python: str,
    alias: bool,
    groups: list[list[str]],
    source: Path,
    args: argparse.Namespace,
    logs: Path,
) -> Side:
    """Run every group with ``python -m pytest`` in a copy of the checkout ``source``; stop
    starting groups past the budget."""
    side = Side()
    start = time.monotonic()
    root = logs / f"{name}_root"  # each side its own copy: what a test writes stays there
    if not root.exists():
        shutil.copytree(source / "tests", root / "tests")
    ini = logs / "pytest.ini"
    ini.write_text("[pytest]\n")
    for i, files in enumerate(groups):
        folder = files[0].rsplit("/", 1)[0]
        left = args.budget - (time.monotonic() - start)
        if left <= 0:
            print(f"  [{name}] {folder}: not run, the side's budget of {args.budget} s is spent")
            continue
        t0 = time.monotonic()
        collected = _run_group(
            f"{name}_{i:02d}",
            python,
            alias,
            files,
            root,
            ini,
            side,
            args,
            deadline=start + args.budget,
        )
        passed = sum(1 for t in collected if side.outcomes[t][0] == "passed")
        print(
            f"  [{name}] {folder}: {passed}/{len(collected)} passed in "
            f"{time.monotonic() - t0:.0f} s",
            flush=True,
        )
    side.seconds = time.monotonic() - start
    return side


def _run_group(
    tag: str,
    python: str,
    alias: bool,
    files: list[str],
    root: Path,
    ini: Path,
    side: Side,
    args: argparse.Namespace,
    deadline: float,
) -> list[str]:
    """Run one folder's files; when pytest stops early (an INTERNALERROR, a crash, the group
    limit), mark the test it stopped in and run the rest again. Returns the ids collected."""
    collected: list[str] = []
    targets = files
    for attempt in range(args.restarts + 1):
        results = root.parent / f"{tag}_{attempt}.jsonl"
        results.unlink(missing_ok=True)
        cmd = [
            python,
            "-m",
            "pytest",
            *PYTEST_ARGS,
            "-c",
            str(ini),
            "--rootdir",
            str(root),
            *targets,
        ]
        env = side_env(args.extras, alias, results, args.timeout)
        limit = min(args.group_timeout, deadline - time.monotonic())
        stop = "pytest stopped in this test"
        with open(root.parent / f"{tag}_{attempt}.log", "w", encoding="utf-8") as log:
            try:
                subprocess.run(
                    cmd,
                    cwd=root,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=max(limit, 1),
                    preexec_fn=_nice,
                )
            except subprocess.TimeoutExpired:
                stop = "process killed in this test (group time limit)"
        ids = read_results(results, side)
        collected.extend(t for t in ids if t not in collected)
        unfinished = [t for t in ids if t not in side.outcomes]
        if not unfinished:
            break
        side.outcomes[unfinished[0]] = ("crashed", stop)
        targets = unfinished[1:]
        if not targets or time.monotonic() >= deadline:
            break
    for test_id in collected:
        side.outcomes.setdefault(test_id, ("killed", "not run: restarts or budget spent"))
    return collected


def _nice() -> None:
    os.nice(10)  # the machine is shared


def reference_side(
    groups: list[list[str]], root: Path, key: str, args: argparse.Namespace, logs: Path
) -> Side:
    """The cached reference outcomes for ``key`` (those of ``groups``' files on a trial),
    else a fresh run of the reference venv."""
    if REFERENCE_CACHE.exists() and not args.refresh_reference:
        cached = json.loads(REFERENCE_CACHE.read_text(encoding="utf-8"))
        if cached.get("key") == key:
            print(f"reference: cached ({REFERENCE_CACHE.name}, mmengine {cached['mmengine']})")
            side = Side.from_json(cached)
            if args.only:
                files = {f for group in groups for f in group}
                side.outcomes = {
                    k: v for k, v in side.outcomes.items() if k.split("::", 1)[0] in files
                }
            return side
    versions = subprocess.run(
        [
            args.reference_python,
            "-c",
            "import mmengine, torch; print(mmengine.__version__, torch.__version__)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    if versions[0] != "0.10.7":
        raise SystemExit(f"the reference venv has mmengine {versions[0]}, not 0.10.7")
    print(f"reference: mmengine {versions[0]}, torch {versions[1]} ({args.reference_python})")
    side = run_side("mmengine", args.reference_python, False, groups, root, args, logs)
    if not args.only:
        record = {"key": key, "mmengine": versions[0], "torch": versions[1], **side.to_json()}
        REFERENCE_CACHE.write_text(json.dumps(record, indent=0) + "\n", encoding="utf-8")
    return side


def _normalise(message: str) -> str:
    message = re.sub(r"0x[0-9a-fA-F]+", "0x..", message)
    message = re.sub(r"/tmp/\S+", "/tmp/...", message)
    return message[:160]


def report(ref: Side, cad: Side, top: int) -> tuple[list[str], dict[str, tuple[str, str]]]:
    """Print the figure and cadence's failures by file and by first error line."""
    counted = sorted(t for t, (outcome, _) in ref.outcomes.items() if outcome == "passed")
    result = {t: cad.outcomes.get(t, ("missing", cad.why_missing(t))) for t in counted}
    failures = {t: r for t, r in result.items() if r[0] != "passed"}
    passed = len(counted) - len(failures)
    share = 100.0 * passed / len(counted) if counted else 0.0
    print(f"\ntests mmengine 0.10.7 passes: {len(counted)}")
    print(f"of those, cadence passes:     {passed}  ({share:.1f} %)")
    by_file = Counter(t.split("::", 1)[0] for t in failures)
    print(f"\ncadence's {len(failures)} failures by test file:")
    for file, n in by_file.most_common():
        print(f"  {n:4d}  {file}")
    by_line = Counter(f"[{o}] {_normalise(m)}" for o, m in failures.values())
    print(f"\nby first error line (top {top}):")
    for line, n in by_line.most_common(top):
        print(f"  {n:4d}  {line}")
    return counted, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--tests",
        type=Path,
        required=True,
        help="the tests/ folder of an mmengine v0.10.7 checkout",
    )
    parser.add_argument(
        "--reference-python",
        default="/tmp/mmengine-0.10.7/bin/python",
        help="python of the real-mmengine venv (mmengine_reference/make_venv.sh)",
    )
    parser.add_argument(
        "--extras",
        type=Path,
        default=None,
        help="folder for the packages both sides share (default: beside --tests)",
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per test phase")
    parser.add_argument(
        "--group-timeout",
        type=float,
        default=900.0,
        help="seconds per pytest process (one per test folder)",
    )
    parser.add_argument("--budget", type=float, default=1500.0, help="seconds per side")
    parser.add_argument(
        "--only",
        nargs="*",
        default=[],
        help="run only these files/folders (a trial: the cached reference is used, "
        "nothing is written)",
    )
    parser.add_argument(
        "--refresh-reference",
        action="store_true",
        help="rerun the reference even if the cache matches",
    )
    parser.add_argument(
        "--restarts",
        type=int,
        default=5,
        help="reruns of a folder's remaining tests after pytest stops early",
    )
    parser.add_argument(
        "--parallel",
        action="store_true",
        help="run the reference (when not cached) beside the cadence side",
    )
    parser.add_argument("--top", type=int, default=25, help="error lines to print")
    parser.add_argument("--logs", type=Path, default=None, help="folder for the pytest logs")
    args = parser.parse_args()
    tests = args.tests.resolve()
    if not (tests / "test_config").is_dir():
        parser.error(f"{tests} does not look like mmengine's tests/ folder (no test_config/)")
    root = tests.parent
    args.extras = (args.extras or root / ".mmut_extras").resolve()
    logs = (args.logs or Path(tempfile.mkdtemp(prefix="mmut_logs_"))).resolve()
    logs.mkdir(parents=True, exist_ok=True)
    print(f"pytest logs in {logs}")
    ensure_extras(args.extras)
    groups = chunks(tests, args.only)
    key = tree_key(tests, args)
    print("cadence: this interpreter, under the alias")
    with ThreadPoolExecutor(max_workers=2 if args.parallel else 1) as pool:
        ref_future = pool.submit(reference_side, groups, root, key, args, logs)
        cad = pool.submit(
            run_side, "cadence", sys.executable, True, groups, root, args, logs
        ).result()
        ref = ref_future.result()
    counted, result = report(ref, cad, args.top)
    passed = sum(1 for o, _ in result.values() if o == "passed")
    share = 100.0 * passed / len(counted) if counted else 0.0
    if args.only:
        print("(--only: a trial; results/ is not written)")
        return
    write(
        "mmengine_unit_tests",
        {
            "mmengine_passes": figure([len(counted)], "tests", "higher"),
            "cadence_passes": figure([passed], "tests", "higher"),
            "cadence_share": figure([share], "%", "higher"),
        },
        note=f"reference key {key}; cadence side {cad.seconds:.0f} s; per-test limit "
        f"{args.timeout:g} s; excluded: {', '.join(EXCLUDED)}",
        details={"tests": {t: list(r) for t, r in result.items()}},
    )


if __name__ == "__main__":
    main()
