"""Run an example script or the cadence command in a subprocess from the repository root."""

from __future__ import annotations

import ast
import os
import subprocess
import sys

from fresh_python import run_python

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_example(*args: str, timeout: int = 600, env: dict[str, str] | None = None) -> str:
    """``python ARGS...`` in the repository root; the stdout (fails on a non-zero exit)."""
    environment = None if env is None else {**os.environ, **env}
    if args[:2] == ("-m", "torch.distributed.run"):  # torchrun itself: a process of its own
        out = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                             timeout=timeout, env=environment)  # fmt: skip
    else:  # forked from a process that imported torch (tests/fresh_python.py)
        out = run_python(args, cwd=ROOT, timeout=timeout, env=environment)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    return out.stdout


def printed(stdout: str, label: str) -> str:
    """The rest of the last line that starts with ``label:`` (the script prints its report
    last; a log line of the run may start with the same label)."""
    line = [x for x in stdout.splitlines() if x.startswith(f"{label}:")][-1]
    return line.split(":", 1)[1].strip()


def printed_dict(stdout: str, label: str) -> dict:
    return ast.literal_eval(printed(stdout, label))
