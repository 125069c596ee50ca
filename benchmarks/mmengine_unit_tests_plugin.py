"""The pytest plugin of ``mmengine_unit_tests.py``: loaded with ``-p mmengine_unit_tests_plugin``
in both runs (real mmengine and cadence), it writes one JSON line per test and per collection
error to ``$MMUT_RESULTS`` and stops a test phase (setup, call, teardown) that runs longer than
``$MMUT_TIMEOUT`` seconds. With ``MMUT_ALIAS=1`` it first does ``import
cadence.compat.mmengine``, so the tests' own ``import mmengine...`` lines resolve to cadence
(nothing in the test files is rewritten).
"""

from __future__ import annotations

import json
import os
import re
import signal
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

if os.environ.get("MMUT_ALIAS") == "1":
    import cadence.compat.mmengine  # noqa: F401  (installs the alias before any test module)

_TIMEOUT = float(os.environ.get("MMUT_TIMEOUT", "0") or 0)
_reports: dict[str, list[Any]] = {}


class PhaseTimeout(Exception):
    """A test phase ran past the per-test limit."""


def _emit(record: dict[str, Any]) -> None:
    path = os.environ.get("MMUT_RESULTS")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def first_error_line(longrepr: Any) -> str:
    """The line that says what went wrong: the crash message, else the first ``E`` line."""
    crash = getattr(longrepr, "reprcrash", None)
    message = getattr(crash, "message", "") if crash is not None else ""
    if not message:
        text = str(longrepr)
        lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
        message = lines[0] if lines else (text.strip().splitlines() or [""])[-1]
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()] or [""]
    line = lines[0]
    if len(line) < 40 and len(lines) > 1:  # "Regex pattern did not match.": say which
        line = f"{line} {lines[1]}"
    return re.sub(r"\s+", " ", line)[:300]


@contextmanager
def _alarm(phase: str) -> Iterator[None]:
    if _TIMEOUT <= 0 or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise PhaseTimeout(f"test {phase} ran past {_TIMEOUT:g} s (per-test limit)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, _TIMEOUT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, Any, Any]:
    with _alarm("setup"):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    with _alarm("call"):
        return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Generator[None, Any, Any]:
    with _alarm("teardown"):
        return (yield)


def pytest_collection_finish(session: pytest.Session) -> None:
    _emit({"collected": [item.nodeid for item in session.items]})


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.failed:
        _emit({"collect_error": report.nodeid, "message": first_error_line(report.longrepr)})


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _reports.setdefault(report.nodeid, []).append(report)


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    reports = _reports.pop(nodeid, [])
    outcome, message, duration = "passed", "", 0.0
    for rep in reports:
        duration += float(getattr(rep, "duration", 0.0))
        if rep.failed:
            if outcome in ("passed", "skipped"):
                outcome = "failed" if rep.when == "call" else "error"
                message = f"{rep.when}: {first_error_line(rep.longrepr)}"
        elif rep.skipped and outcome == "passed":
            outcome = "skipped"
    if not reports:
        outcome = "error"
    _emit({"id": nodeid, "outcome": outcome, "message": message, "duration": round(duration, 3)})
