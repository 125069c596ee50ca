"""The end of a sweep: a table of its trials and the best one, and a plot (``sweep.png``)."""

from __future__ import annotations

import math
import os
import sys
import tempfile
from collections.abc import Sequence
from typing import Any, TextIO

from .params import ParamSpec


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return "" if value is None else str(value)


def _note(trial: Any) -> str:
    attrs = trial.user_attrs
    notes = []
    retried = trial.system_attrs.get("failed_trial")  # set by Optuna's RetryFailedTrialCallback
    if retried is not None:
        notes.append(f"retry of {retried}")
    if "failed_because" in attrs:
        notes.append(attrs["failed_because"])
    if "error" in attrs:
        notes.append(attrs["error"])
    if trial.state.name == "PRUNED" and trial.intermediate_values:
        notes.append(f"pruned at step {max(trial.intermediate_values)}")
    return "; ".join(notes)


def trial_rows(study: Any, specs: Sequence[ParamSpec]) -> tuple[list[str], list[list[str]]]:
    """The header and one row per trial: number, state, value, each parameter, notes."""
    short = [s.key.rsplit(".", 1)[-1] for s in specs]
    names = short if len(set(short)) == len(short) else [s.key for s in specs]
    header = ["trial", "state", "value", *names, "note"]
    rows = []
    for trial in study.get_trials(deepcopy=False):
        params = [_fmt(trial.params.get(s.key)) for s in specs]
        rows.append([str(trial.number), trial.state.name, _fmt(trial.value), *params, _note(trial)])
    return header, rows


def best_line(study: Any, metric: str) -> str:
    """``best: trial N, METRIC = V (key=value, ...)``, or why there is none."""
    from optuna.trial import TrialState

    if not study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        return "best: none (no trial completed)"
    best = study.best_trial
    params = ", ".join(f"{k}={_fmt(v)}" for k, v in best.params.items())
    where = best.user_attrs.get("work_dir", "")
    return f"best: trial {best.number}, {metric} = {_fmt(best.value)} ({params}) in {where}"


def print_report(study: Any, specs: Sequence[ParamSpec], metric: str,
                 stream: TextIO | None = None) -> None:  # fmt: skip
    """Print the trials and the best one: a rich table on a terminal, plain columns when piped."""
    stream = stream or sys.stdout
    header, rows = trial_rows(study, specs)
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        from rich.console import Console
        from rich.table import Table

        goal = study.direction.name.lower()
        table = Table(title=f"sweep '{study.study_name}' ({metric}, {goal})")
        for name in header:
            table.add_column(name, justify="right" if name in ("trial", "value") else "left")
        for row in rows:
            table.add_row(*row)
        Console(file=stream).print(table)
    else:
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        for row in [header, *rows]:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip(), file=stream)
    print(best_line(study, metric), file=stream)


def plot_sweep(study: Any, specs: Sequence[ParamSpec], metric: str, out: str) -> None:
    """Draw the trials' values against trial number (with the best so far) and against
    each parameter into ``out``. Needs matplotlib (imported here)."""
    from matplotlib.figure import Figure
    from optuna.trial import TrialState

    done = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if t.value is not None and math.isfinite(t.value)]  # fmt: skip
    pruned = [t for t in study.get_trials(deepcopy=False, states=(TrialState.PRUNED,))
              if t.intermediate_values]  # fmt: skip
    figure = Figure(figsize=(4.5 * (1 + len(specs)), 3.6), layout="constrained")
    axes = figure.subplots(1, 1 + len(specs), squeeze=False)[0]
    first = axes[0]
    first.scatter([t.number for t in done], [t.value for t in done], label="complete")
    if pruned:
        last = [t.intermediate_values[max(t.intermediate_values)] for t in pruned]
        first.scatter([t.number for t in pruned], last, marker="x", color="grey", label="pruned")
    if done:
        pick = max if study.direction.name == "MAXIMIZE" else min
        best, xs, ys = None, [], []
        for trial in sorted(done, key=lambda t: t.number):
            best = trial.value if best is None else pick(best, trial.value)
            xs.append(trial.number)
            ys.append(best)
        first.step(xs, ys, where="post", color="C1", label="best so far")
    first.set(xlabel="trial", ylabel=metric, title=f"sweep '{study.study_name}'")
    first.legend(fontsize="small")
    for ax, spec in zip(axes[1:], specs):
        values = [t.params.get(spec.key) for t in done]
        if spec.kind == "choice":
            labels = [str(c) for c in spec.choices]
            ax.set_xticks(range(len(labels)), labels)
            values = [labels.index(str(v)) for v in values]
        ax.scatter(values, [t.value for t in done])
        if spec.kind == "loguniform":
            ax.set_xscale("log")
        ax.set(xlabel=spec.key, ylabel=metric)
    folder = os.path.dirname(os.path.abspath(out))
    fd, tmp = tempfile.mkstemp(suffix=".png", dir=folder)  # other workers may write it too
    os.close(fd)
    try:
        figure.savefig(tmp, dpi=100)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
