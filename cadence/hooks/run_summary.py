"""The few lines a training run prints before its first iteration, and its closing table.

:func:`start_lines` says what runs (the model and its parameter count, the
data, the work dir, where training starts); :func:`summary_lines` says how it
ended (time, last and best metrics, checkpoints, where the curves are). The
logger hook prints both.
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

_TIME_KEYS = ("time", "data_time")
#: Columns every console line of a run fits in.
WIDTH = 100


def short_path(path: str) -> str:
    """``path`` relative to the working directory when it is inside it (shorter lines)."""
    if "://" in path or not os.path.isabs(path):
        return path
    try:
        relative = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return path
    return path if relative.startswith("..") else relative


def fit_path(prefix: str, path: str, suffix: str = "", width: int = WIDTH) -> str:
    """``prefix + path + suffix`` in at most ``width`` columns where it can be: folders in
    the middle of ``path`` give way to ``...`` (its first folder and file name stay)."""
    line = prefix + path + suffix
    head, *tail = path.split(os.sep)
    for keep in range(len(tail) - 1, 0, -1):
        if len(line) <= width:
            break
        line = prefix + os.sep.join([head, "...", *tail[-keep:]]) + suffix
    return line


def _count(obj: Any) -> str:
    try:
        return f"{len(obj):,}"
    except (TypeError, NotImplementedError):
        return "?"


def _batch_size(loader: Any) -> int | None:
    size = getattr(loader, "batch_size", None)
    if size is None:
        size = getattr(getattr(loader, "batch_sampler", None), "batch_size", None)
    return size if isinstance(size, int) else None


def _data_line(runner: RunnerProtocol) -> str:
    train = runner.train_loop.dataloader
    size = _batch_size(train)
    batches = f" in {_count(train)} batches" + (f" of {size}" if size else "")
    parts = [f"train {_count(getattr(train, 'dataset', ()))} samples{batches}"]
    val_loop = runner.val_loop
    if val_loop is not None:
        loaders = getattr(val_loop, "dataloaders", None) or {None: val_loop.dataloader}
        sizes = [(name, _count(getattr(loader, "dataset", ()))) for name, loader in loaders.items()]
        if len(sizes) == 1:
            parts.append(f"val {sizes[0][1]} samples")
        else:  # named sets
            parts.append(
                "val " + ", ".join(f"{name} {count}" for name, count in sizes) + " samples"
            )
    if runner.world_size > 1:
        parts.append(f"batches per process, {runner.world_size} processes")
    return "data: " + ", ".join(parts)


def _model_line(runner: RunnerProtocol) -> str:
    model = runner.strategy.unwrap(runner.model)
    params = list(model.parameters())
    total = sum(p.numel() for p in params)
    trainable = sum(p.numel() for p in params if p.requires_grad)
    shard = " on this process" if runner.world_size > 1 else ""
    return f"model: {type(model).__name__}, {total:,} parameters{shard} ({trainable:,} trainable)"


def _position_line(runner: RunnerProtocol) -> str:
    done = runner.iter
    if runner.train_loop_by_epoch:
        where = f"epoch {runner.epoch + 1} of {runner.max_epochs}"
    else:
        where = f"iteration {done + 1} of {runner.max_iters}"
    if done > 0:
        return f"resumed: continuing at {where} ({done:,} iterations done)"
    return f"start: {where}, {runner.max_iters:,} iterations in all"


def start_lines(runner: RunnerProtocol) -> list[str]:
    """What this training run does, in four lines (model, data, work dir, start point)."""
    return [
        _model_line(runner),
        _data_line(runner),
        fit_path(
            "work_dir: ",
            short_path(runner.work_dir),
            f" (this run's log, hooks.txt, scalars: {os.path.basename(runner.log_dir)}/)",
        ),  # fmt: skip
        _position_line(runner),
    ]


def _metric_rows(
    runner: RunnerProtocol, rule_of: Callable[[str], str | None]
) -> list[tuple[str, str, str]]:
    """``(metric, last, best)`` of each validation metric; ``best`` over the run's
    validations by the metric's rule (``'greater'``/``'less'``), blank without one."""
    from .log_processor import _lone_loss_terms

    scalars = {
        key[len("val/") :]: buffer
        for key, buffer in runner.message_hub.log_scalars.items()
        if key.startswith("val/") and key[len("val/") :] not in _TIME_KEYS
    }
    lone = set(_lone_loss_terms(scalars))  # `loss` is its one term: listed once
    rows = []
    for name, buffer in scalars.items():
        if name in lone:
            continue
        values = [float(v) for v in buffer.data[0]]
        rule = rule_of(name)
        best = "" if rule is None or not values else (
            f"{(max if rule == 'greater' else min)(values):.4f}"
        )  # fmt: skip
        rows.append((name, f"{float(buffer.current()):.4f}", best))
    return rows


def summary_lines(
    runner: RunnerProtocol, seconds: float, rule_of: Callable[[str], str | None] = lambda _: None
) -> list[str]:
    """The end-of-training table: time, metrics (last, and best by ``rule_of(name)``:
    ``'greater'``, ``'less'`` or None), checkpoints, curves."""
    elapsed = datetime.timedelta(seconds=int(seconds))
    plural = "" if runner.epoch == 1 else "s"
    unit = f"{runner.epoch} epoch{plural}, " if runner.train_loop_by_epoch else ""
    lines = [f"Training finished in {elapsed} ({unit}{runner.iter:,} iterations)"]
    rows = _metric_rows(runner, rule_of)
    if rows:
        width = max(len("metric"), *(len(r[0]) for r in rows))
        lines.append(f"  {'metric':<{width}}  {'last':>10}  {'best':>10}")
        lines += [f"  {n:<{width}}  {last:>10}  {best:>10}" for n, last, best in rows]
    info = runner.message_hub.runtime_info
    if info.get("last_ckpt"):
        lines.append(fit_path("last checkpoint: ", short_path(str(info["last_ckpt"]))))
    for key, path in info.items():
        if key.startswith("best_ckpt") and path:
            lines.append(fit_path("best checkpoint: ", short_path(str(path))))
    scalars = os.path.join(runner.log_dir, "vis_data", "scalars.json")
    if os.path.exists(scalars):
        lines.append(_plot_line(short_path(runner.work_dir), short_path(scalars)))
    return lines


def _plot_line(work_dir: str, scalars: str) -> str:
    """How to draw the curves: the command, and the file where it fits in :data:`WIDTH`."""
    command = f"plot: `cadence plot {work_dir}`"
    for line in (f"{command} draws the curves of {scalars}", f"{command} draws this run's curves"):
        if len(line) <= WIDTH:
            return line
    return command  # a work dir too long to elide: the command must stay runnable


__all__ = ["fit_path", "short_path", "start_lines", "summary_lines"]
