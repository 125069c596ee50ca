"""Read runs' ``scalars.json`` logs back as curves (what ``cadence plot`` draws).

A log holds one JSON object per line. Lines written after training iterations
carry an ``iter`` entry (and ``epoch`` when training by epoch); the others were
written after validation or test epochs, whose ``step`` is the epoch or the
iteration depending on ``LoggerHook.log_metric_by_epoch``. Curves put both kinds
on one x axis: the training iteration, or the (fractional) epoch.
"""

from __future__ import annotations

import glob
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from ..fileio import is_url
from ..fileio.staging import STAGED_NAME

SCALAR_FILE = "scalars.json"
BOOKKEEPING = ("step", "iter", "epoch")
X_AXES = ("step", "epoch")
_TIMESTAMP = re.compile(r"\d{8}_\d{6}")


class PlotError(Exception):
    """A run, a key or an option that cannot be plotted; the message says why."""


def find_scalar_log(path: str | os.PathLike[str]) -> str:
    """The scalar log of ``path``: the file itself, ``<path>/scalars.json`` (a
    ``vis_data`` dir), ``<path>/vis_data/scalars.json`` (one run), or the latest
    ``<path>/<timestamp>/vis_data/scalars.json`` (a work dir)."""
    path = os.fspath(path)
    if is_url(path):
        return _fetch_scalar_log(path)
    if os.path.isfile(path):
        return path
    if not os.path.isdir(path):
        raise PlotError(f"no such file or directory: {path}")
    for candidate in (
        os.path.join(path, SCALAR_FILE),
        os.path.join(path, "vis_data", SCALAR_FILE),
    ):
        if os.path.isfile(candidate):
            return candidate
    found = glob.glob(os.path.join(glob.escape(path), "*", "vis_data", SCALAR_FILE))
    if not found:
        raise PlotError(
            f"no {SCALAR_FILE} under {path} (looked for {path}/*/vis_data/{SCALAR_FILE}); "
            "pass a work dir, a run dir or a scalars.json file"
        )
    return max(found, key=_run_order)


def _fetch_scalar_log(url: str) -> str:
    """Download the scalar log of a remote work dir, run dir or file (found as
    :func:`find_scalar_log` finds it locally); return the staged copy."""
    from ..fileio import filesystem
    from ..fileio.staging import StagingArea

    fs, inner = filesystem(url)
    fs.invalidate_cache()  # listings cached by this process may predate the last upload
    is_file = fs.isfile(inner)
    if is_file:
        found = [inner]
    else:
        direct = (f"{inner}/{SCALAR_FILE}", f"{inner}/vis_data/{SCALAR_FILE}")
        found = [c for c in direct if fs.isfile(c)]
        found = found or sorted(fs.glob(f"{inner}/*/vis_data/{SCALAR_FILE}"))
    if not found:
        raise PlotError(f"no {SCALAR_FILE} under {url}; pass a work dir, a run dir or a file")
    remote = found[-1]  # timestamped run dirs sort by time
    folder_url, folder = (url.rsplit("/", 1)[0], inner.rsplit("/", 1)[0]) if is_file else (
        url.rstrip("/"), inner.rstrip("/"))  # fmt: skip
    local = os.path.join(StagingArea().stage(folder_url), remote[len(folder) + 1 :])
    os.makedirs(os.path.dirname(local), exist_ok=True)
    fs.get_file(remote, local)
    return local


def _run_order(log_path: str) -> tuple[str, float]:
    """Runs sort by their timestamp directory name, then by when the log was written."""
    run_dir = os.path.basename(os.path.dirname(os.path.dirname(log_path)))
    stamp = run_dir if _TIMESTAMP.fullmatch(run_dir) else ""
    return stamp, os.path.getmtime(log_path)


def read_records(log_path: str) -> list[dict[str, Any]]:
    """The JSON objects of a scalar log, one per non-empty line."""
    records = []
    with open(log_path, encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise PlotError(f"{log_path}:{number} is not a JSON line ({exc.msg})") from exc
            if not isinstance(record, dict):
                raise PlotError(f"{log_path}:{number} is not a JSON object")
            records.append(record)
    return records


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


@dataclass
class Curve:
    """One line of a plot: its label suffix (``''``, ``'train'`` or ``'eval'``) and points."""

    phase: str
    xs: list[float] = field(default_factory=list)
    ys: list[float] = field(default_factory=list)


@dataclass
class ScalarLog:
    """The records of one run's scalar log."""

    name: str
    path: str
    records: list[dict[str, Any]]

    @classmethod
    def load(cls, path: str | os.PathLike[str], name: str | None = None) -> ScalarLog:
        """Find and read the log of ``path`` (see :func:`find_scalar_log`)."""
        log_path = find_scalar_log(path)
        return cls(name or default_run_name(log_path), log_path, read_records(log_path))

    def keys(self) -> list[str]:
        """Keys with a numeric value somewhere (not step/iter/epoch), in first-seen order."""
        seen: dict[str, None] = {}
        for record in self.records:
            for key, value in record.items():
                if key not in BOOKKEEPING and _number(value) is not None:
                    seen.setdefault(key, None)
        return list(seen)

    def curves(self, key: str, x: str = "step") -> list[Curve]:
        """The points of ``key``: one curve, or a 'train' and an 'eval' curve when the
        key is logged in both (e.g. ``time``). ``x`` is 'step' (training iteration)
        or 'epoch' (fractional epoch; needs epoch-based training records)."""
        if x not in X_AXES:
            raise PlotError(f"x must be one of {list(X_AXES)}, got {x!r}")
        positions = self._positions(x)
        by_phase: dict[str, Curve] = {}
        for record, position in zip(self.records, positions):
            value = _number(record.get(key))
            if value is None or position is None:
                continue
            phase = "train" if "iter" in record else "eval"
            curve = by_phase.setdefault(phase, Curve(phase))
            curve.xs.append(position)
            curve.ys.append(value)
        if len(by_phase) == 1:
            next(iter(by_phase.values())).phase = ""
        return [by_phase[p] for p in ("train", "eval") if p in by_phase]

    def _positions(self, x: str) -> list[float | None]:
        """Where each record sits on the x axis."""
        if x == "epoch":
            return self._epoch_positions()
        positions: list[float | None] = []
        last_iter = 0.0
        for record in self.records:
            step = _number(record.get("step"))
            if "iter" in record:
                last_iter = step if step is not None else last_iter
                positions.append(step)
            else:  # evaluation: stepped by epoch or iteration; place it at the iteration
                positions.append(None if step is None else max(step, last_iter))
        return positions

    def _epoch_positions(self) -> list[float | None]:
        train = [r for r in self.records if "iter" in r]
        if train and any(_number(r.get("epoch")) is None for r in train):
            raise PlotError(
                f"{self.path}: --x epoch needs an 'epoch' entry in the training records, but "
                "this run trains by iteration; use --x step"
            )
        per_epoch = _iters_per_epoch(train)
        positions: list[float | None] = []
        last_epoch: float | None = None
        for record in self.records:
            if "iter" in record:
                epoch = float(record["epoch"])
                iters = _number(record.get("iter"))
                fraction = epoch if iters is None else iters / per_epoch
                positions.append(min(max(fraction, epoch - 1.0), epoch))
                last_epoch = epoch
            else:  # evaluation after the epoch that just ended
                step = _number(record.get("step"))
                positions.append(last_epoch if last_epoch is not None else step)
        return positions


def _iters_per_epoch(train: list[dict[str, Any]]) -> float:
    """Iterations per epoch, from the last logged iteration of consecutive epochs."""
    last: dict[int, float] = {}
    for record in train:
        iters = _number(record.get("iter"))
        if iters is not None:
            epoch = int(record["epoch"])
            last[epoch] = max(last.get(epoch, 0.0), iters)
    gaps = [last[e + 1] - last[e] for e in last if e + 1 in last]
    if gaps and max(gaps) > 0:
        return max(gaps)
    if last:
        epoch = max(last)
        return max(last[epoch] / epoch, 1.0)
    return 1.0


def default_run_name(log_path: str) -> str:
    """The work dir's name for ``<work_dir>/<timestamp>/vis_data/scalars.json``, else
    the name of the file's directory."""
    folder = os.path.dirname(os.path.abspath(log_path))
    if os.path.basename(folder) == "vis_data":
        run_dir = os.path.dirname(folder)
        if _TIMESTAMP.fullmatch(os.path.basename(run_dir)):
            return _unstaged(os.path.basename(os.path.dirname(run_dir)))
        return _unstaged(os.path.basename(run_dir))
    return _unstaged(os.path.basename(folder))


def _unstaged(name: str) -> str:
    """A folder's name without the key of a staged remote folder (``<12 hex>-run``)."""
    return STAGED_NAME.sub("", name)


def load_runs(paths: list[str]) -> list[ScalarLog]:
    """Load each path's log; runs sharing a name get their run dir (then their path) added."""
    logs = [ScalarLog.load(path) for path in paths]
    for log in _clashing(logs):
        run_dir = os.path.dirname(os.path.dirname(os.path.abspath(log.path)))
        log.name = f"{log.name}/{os.path.basename(run_dir)}"
    clashing = {id(log) for log in _clashing(logs)}
    for log, path in zip(logs, paths):
        if id(log) in clashing:
            log.name = path
    return logs


def _clashing(logs: list[ScalarLog]) -> list[ScalarLog]:
    names = [log.name for log in logs]
    return [log for log in logs if names.count(log.name) > 1]
