"""``run.json``: a record of every run of a work dir (what ran, where, from which code).

Rank 0 appends one record each time ``train`` starts, resumed runs included; a
dirty git tree's diff is saved beside it as ``run-<timestamp>.diff``. Nothing here
may stop a run: a fact that cannot be read is recorded as ``None``.
"""

from __future__ import annotations

import json
import os
import platform
import re
import socket
import subprocess
import sys
import threading
import time
import warnings
from typing import Any

import torch

from ..contracts import RunnerProtocol
from ..version import __version__

RECORD_FILE = "run.json"
_DIST_INFO = re.compile(r"^([A-Za-z0-9_.]+?)-([^-]+?)\.(?:dist|egg)-info$")
#: Environment variables that change how training runs, recorded with their values.
ENV_PREFIXES = ("CUDA_", "NCCL_", "OMP_", "MKL_", "TORCH_", "PYTORCH_", "CUBLAS_", "CUDNN_")


def _git(directory: str, *args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=directory, capture_output=True,
                             text=True, timeout=10, check=True)  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout


def git_state(directory: str) -> tuple[dict[str, Any], str]:
    """``({commit, dirty, untracked}, diff)`` of the checkout holding ``directory``
    (``commit`` None outside one; ``diff`` is ``git diff HEAD``, empty when clean)."""
    commit = _git(directory, "rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None, "untracked": []}, ""
    status = _git(directory, "status", "--porcelain") or ""
    lines = status.splitlines()
    untracked = sorted(line[3:] for line in lines if line.startswith("?? "))
    diff = _git(directory, "diff", "HEAD", "--binary") or ""
    dirty = any(not line.startswith("?? ") for line in lines)
    return {"commit": commit.strip(), "dirty": dirty, "untracked": untracked}, diff


class GitProbe:
    """:func:`git_state` of ``directory`` run on a thread of its own from now on, so the
    git commands (a few tens of ms each, more on a busy machine) overlap the building of
    the model, data and optimizer; :meth:`result` waits for it."""

    def __init__(self, directory: str) -> None:
        self._result: tuple[dict[str, Any], str] | None = None
        self._thread = threading.Thread(
            target=self._run, args=(directory,), name="cadence-git-state", daemon=True
        )
        self._thread.start()

    def _run(self, directory: str) -> None:
        self._result = git_state(directory)

    def result(self) -> tuple[dict[str, Any], str]:
        """``(facts, diff)`` as :func:`git_state` returns them."""
        self._thread.join()
        if self._result is None:  # the thread died: ask again, here
            self._result = git_state(os.getcwd())
        return self._result


def installed_packages() -> list[str]:
    """``name==version`` of every distribution installed on ``sys.path``, sorted (``pip
    freeze``'s facts, read from the ``.dist-info``/``.egg-info`` folder names: reading
    every package's metadata takes seconds)."""
    found: set[str] = set()
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            match = _DIST_INFO.match(name)
            if match:
                found.add(f"{match.group(1)}=={match.group(2)}")
    return sorted(found, key=str.lower)


def training_env() -> dict[str, str]:
    """The environment variables (by :data:`ENV_PREFIXES`) that affect training."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(ENV_PREFIXES)}


def make_record(
    runner: RunnerProtocol, git: dict[str, Any], diff_file: str | None
) -> dict[str, Any]:
    """The record of this start of ``runner``'s training."""
    return {
        "experiment": runner.experiment_name,
        "timestamp": runner.timestamp,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "versions": {
            "cadence": __version__,
            "torch": torch.__version__,
            "python": platform.python_version(),
            "cuda": torch.version.cuda,
            "cudnn": torch.backends.cudnn.version(),
        },  # fmt: skip
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "world_size": runner.world_size,
        "strategy": type(runner.strategy).__name__,
        "seed": runner.seed,
        "start": {"epoch": runner.epoch, "iter": runner.iter},
        "resumed": runner.iter > 0,
        "git": {**git, "diff_file": diff_file},
        "command": list(getattr(sys, "orig_argv", sys.argv)),
        "cwd": os.getcwd(),
        "env": training_env(),
        "packages": installed_packages(),
    }


def _previous_records(path: str) -> list[dict[str, Any]]:
    """The records already in ``path``; an unreadable file is kept aside with a warning."""
    if not os.path.isfile(path):
        return []
    try:
        with open(path, encoding="utf-8") as file:
            records = json.load(file)
        if isinstance(records, list):
            return records
    except (OSError, ValueError):
        pass
    aside = f"{path}.unreadable-{int(time.time())}"
    os.replace(path, aside)
    warnings.warn(f"{path} was not a list of run records; kept as {aside}", stacklevel=3)
    return []


def append_run_record(runner: RunnerProtocol, git_probe: GitProbe | None = None) -> str | None:
    """Append this run's record to ``<work_dir>/run.json`` (rank 0; others do nothing);
    return the file's path. A remote work dir's records are pulled first and pushed back.
    ``git_probe``: the git facts asked for earlier (:class:`GitProbe`), else asked now."""
    if runner.rank != 0:
        return None
    work_dir = runner.work_dir
    path = os.path.join(work_dir, RECORD_FILE)
    storage = runner.paths.storage
    storage.pull_file(path)
    git, diff = git_probe.result() if git_probe is not None else git_state(os.getcwd())
    diff_file = None
    if diff:
        diff_file = f"run-{runner.timestamp}.diff"
        with open(os.path.join(work_dir, diff_file), "w", encoding="utf-8") as file:
            file.write(diff)
        storage.push_file(os.path.join(work_dir, diff_file))
    records = _previous_records(path)
    records.append(make_record(runner, git, diff_file))
    temporary = f"{path}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        json.dump(records, file, indent=1, default=str)
    os.replace(temporary, path)
    storage.push_file(path)
    return path


SUMMARY_FILE = "model_summary.txt"


def record_run_start(runner: RunnerProtocol, git_probe: GitProbe | None = None) -> None:
    """At the start of ``train``: log the model's size in one line, and (rank 0) write the
    full summary table to ``<work_dir>/model_summary.txt`` and append to ``run.json``."""
    from ..logging.console import DETAIL
    from ..model.summary import summary_line, summary_table

    model = runner.strategy.unwrap(runner.model)
    # the console's start lines already name the parameter count: this one goes to the file
    runner.logger.info(f"{summary_line(model)} (table: {SUMMARY_FILE})", extra=DETAIL)
    if runner.rank == 0:
        path = os.path.join(runner.work_dir, SUMMARY_FILE)
        with open(path, "w", encoding="utf-8") as file:
            file.write(summary_table(model) + "\n")
        runner.paths.storage.push_file(path)
    append_run_record(runner, git_probe)
