"""``cadence plot``: draw the scalar curves of one or more runs into an image.

matplotlib is imported only when a plot is drawn (``pip install 'cadence[plot]'``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from ..utils import closest_names
from .scalar_log import X_AXES, PlotError, ScalarLog, load_runs

MATPLOTLIB_HINT = "pip install matplotlib  (or: pip install 'cadence[plot]')"
_MARKER_LIMIT = 40  # curves with fewer points get a marker on each point


def _figure_class() -> Any:
    """``matplotlib.figure.Figure`` (no pyplot, so no GUI backend is touched)."""
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise PlotError(f"`cadence plot` needs matplotlib: {MATPLOTLIB_HINT}") from exc
    return Figure


def close_keys(key: str, available: Sequence[str]) -> list[str]:
    """Logged keys that ``key`` may have meant: close spellings, else keys containing it
    (``acc`` -> ``accuracy/top1``)."""
    close = closest_names(key, available)
    if close:
        return close
    lowered = key.lower()
    return [name for name in available if lowered and lowered in name.lower()][:3]


def _describe_unknown(key: str, available: Sequence[str]) -> str:
    close = close_keys(key, available)
    if not close:
        return repr(key)
    return f"{key!r} (did you mean {' or '.join(map(repr, close))}?)"


def select_keys(runs: Sequence[ScalarLog], keys: Sequence[str] | None) -> list[str]:
    """The keys to draw: ``keys`` (each must be logged by some run) or every logged key."""
    available: dict[str, None] = {}
    for run in runs:
        for key in run.keys():
            available.setdefault(key, None)
    if not available:
        raise PlotError("no numeric values in " + ", ".join(run.path for run in runs) + " to plot")
    if not keys:
        return list(available)
    unknown = [key for key in keys if key not in available and not set_keys(key, available)]
    if unknown:
        names = list(available)
        described = ", ".join(_describe_unknown(key, names) for key in unknown)
        raise PlotError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {described}; "
            f"the runs log: {', '.join(names)}"
        )
    return list(dict.fromkeys(keys))


def set_keys(key: str, available: Iterable[str]) -> list[str]:
    """The logged keys ``<set>/<key>`` of several validation or test sets
    (``clean/accuracy/top1`` for ``accuracy/top1``), drawn in ``key``'s subplot."""
    suffix = f"/{key}"
    return [name for name in available if name.endswith(suffix) and len(name) > len(suffix)]


def _lines(run: ScalarLog, key: str, x: str) -> list[tuple[str, Any]]:
    """``(label, curve)`` of each line of ``key``'s subplot for one run: the key's own
    curves, then one per set that logs ``<set>/<key>``."""
    lines = []
    for curve in run.curves(key, x):
        lines.append((f"{run.name} ({curve.phase})" if curve.phase else run.name, curve))
    for name in set_keys(key, run.keys()):
        label = f"{run.name} ({name[: -len(key) - 1]})"
        lines.extend((label, curve) for curve in run.curves(name, x))
    return lines


def _grid(count: int) -> tuple[int, int]:
    cols = 1 if count == 1 else 2 if count <= 4 else 3
    return (count + cols - 1) // cols, cols


def draw(runs: Sequence[ScalarLog], keys: Sequence[str], x: str, out: str) -> None:
    """Draw one subplot per key, one line per run (and phase, and validation set: a key
    that sets log as ``<set>/<key>`` gets a line per set), and save to ``out``."""
    figure_cls = _figure_class()
    rows, cols = _grid(len(keys))
    figure = figure_cls(figsize=(5.5 * cols, 3.6 * rows), layout="constrained")
    axes = figure.subplots(rows, cols, squeeze=False)
    for index, key in enumerate(keys):
        ax = axes[index // cols][index % cols]
        for run in runs:
            for label, curve in _lines(run, key, x):
                marker = "o" if len(curve.xs) < _MARKER_LIMIT else None
                ax.plot(curve.xs, curve.ys, label=label, marker=marker, markersize=3)
        ax.set_title(key)
        ax.set_xlabel("iteration" if x == "step" else "epoch")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
    for index in range(len(keys), rows * cols):
        axes[index // cols][index % cols].set_visible(False)
    folder = os.path.dirname(os.path.abspath(out))
    os.makedirs(folder, exist_ok=True)
    try:
        figure.savefig(out, dpi=100)
    except ValueError as exc:  # an image format matplotlib does not know
        raise PlotError(f"cannot save {out}: {exc}") from exc


def plot_runs(
    paths: Sequence[str],
    keys: Sequence[str] | None = None,
    out: str = "curves.png",
    x: str = "step",
) -> list[str]:
    """Plot the runs at ``paths`` (work dirs, run dirs or scalars.json files) into
    ``out``; return the keys drawn."""
    if x not in X_AXES:
        raise PlotError(f"x must be one of {list(X_AXES)}, got {x!r}")
    _figure_class()  # fail early, before reading anything
    runs = load_runs(list(paths))
    chosen = select_keys(runs, keys)
    draw(runs, chosen, x, out)
    return chosen


def _run_plot_command(args: argparse.Namespace) -> int:
    try:
        keys = plot_runs(args.runs, args.keys, args.out, args.x)
    except PlotError as exc:
        if getattr(args, "debug", False):
            raise
        print(f"cadence: error: {exc}", file=sys.stderr)
        return 2
    print(f"saved {args.out} ({len(keys)} keys, {len(args.runs)} runs)")
    return 0


def add_plot_command(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``plot`` subcommand to the ``cadence`` command's subparsers."""
    parser = subparsers.add_parser(
        "plot",
        help="plot scalar curves (loss, lr, metrics) of one or more runs",
        description=(
            "Plot the scalars logged by LocalVisBackend: one subplot per key, one line per "
            "run. Each RUN is a work dir (its latest <timestamp>/vis_data/scalars.json is "
            "used), a run dir, or a scalars.json file."
        ),
    )
    parser.add_argument("runs", nargs="+", metavar="RUN", help="work dir or scalars.json")
    parser.add_argument(
        "--keys",
        nargs="+",
        metavar="KEY",
        help="keys to plot (default: every logged key); a key that several validation sets "
        "log as SET/KEY is drawn with one line per set",
    )
    parser.add_argument("--out", default="curves.png", help="image file (default: curves.png)")
    parser.add_argument(
        "--x",
        choices=X_AXES,
        default="step",
        help="x axis: training iteration (step) or fractional epoch (epoch)",
    )
    parser.set_defaults(func=_run_plot_command)
    return parser
