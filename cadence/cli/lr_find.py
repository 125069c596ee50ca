"""``cadence lr-find cfg.py``: an LR range test.

Trains a copy of the config's model for a few hundred steps while the learning rate
grows exponentially from ``--start-lr`` to ``--end-lr``, records the smoothed loss at
each LR, stops once the loss diverges, and suggests the LR where the smoothed loss
falls fastest. It writes only to ``<work_dir>/lr_find/`` (a table, a CSV and a
plot): no checkpoint is saved, read or rotated, and no validation runs.
"""

from __future__ import annotations

import argparse
import math
import os
from dataclasses import dataclass, field
from typing import Any

from .common import CliError, add_cfg_options


def add_lr_find_command(sub: Any) -> None:
    """Register ``lr-find`` on the ``cadence`` parser."""
    parser = sub.add_parser("lr-find", help="LR range test: loss against an exponential LR sweep")
    parser.add_argument("config", help="config file (.py, .json, .yaml)")
    parser.add_argument("--start-lr", type=float, default=1e-7)
    parser.add_argument("--end-lr", type=float, default=10.0)
    parser.add_argument("--steps", type=int, default=100, help="training steps at most")
    parser.add_argument(
        "--smooth", type=float, default=0.9, help="weight of the past in the loss's average"
    )
    parser.add_argument(
        "--diverge", type=float, default=4.0, help="stop at this many times the best loss"
    )
    parser.add_argument("--work-dir", help="results go to WORK_DIR/lr_find")
    add_cfg_options(parser)
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE")
    parser.set_defaults(func=_lr_find, mode="lr-find")


@dataclass
class Sweep:
    """The LR schedule and what was seen along it."""

    start: float
    end: float
    steps: int
    smooth: float = 0.9
    diverge: float = 4.0
    lrs: list[float] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)
    smoothed: list[float] = field(default_factory=list)
    _average: float = field(default=0.0, repr=False)

    def lr_at(self, step: int) -> float:
        """The LR of ``step`` (0-based): ``start`` at 0, ``end`` at ``steps - 1``."""
        if self.steps == 1:
            return self.start
        return self.start * (self.end / self.start) ** (step / (self.steps - 1))

    def record(self, lr: float, loss: float) -> bool:
        """Note the loss of a step; True when training should stop (diverged)."""
        self.lrs.append(lr)
        self.losses.append(loss)
        if not math.isfinite(loss):
            self.smoothed.append(math.inf)
            return True
        # exponential moving average, bias-corrected (its first value is the first loss)
        self._average = self.smooth * self._average + (1 - self.smooth) * loss
        value = self._average / (1 - self.smooth ** len(self.losses)) if self.smooth else loss
        self.smoothed.append(value)
        return value > self.diverge * min(self.smoothed)

    def suggestion(self) -> float | None:
        """The LR where the smoothed loss falls fastest against log(LR), before it
        diverges; None with fewer than three finite points."""
        points = [(math.log(lr), s) for lr, s in zip(self.lrs, self.smoothed) if math.isfinite(s)]
        if len(points) < 3:
            return None
        slopes = [(points[i + 1][1] - points[i - 1][1]) / (points[i + 1][0] - points[i - 1][0])
                  for i in range(1, len(points) - 1)]  # fmt: skip
        steepest = min(range(len(slopes)), key=slopes.__getitem__)
        return math.exp(points[steepest + 1][0])


def sweep_hook(sweep: Sweep) -> Any:
    """A hook that sets every param group's LR before each step (keeping the groups'
    ratios) and records the step's loss; it stops the loop when the loss diverges."""
    from ..contracts import RunnerProtocol
    from ..hooks import Hook

    class SweepHook(Hook):
        priority = "VERY_HIGH"

        def __init__(self) -> None:
            self.ratios: list[float] = []

        def before_train_iter(
            self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None
        ) -> None:
            groups = runner.optim_wrapper.param_groups
            if not self.ratios:
                first = groups[0]["lr"] or 1.0
                self.ratios = [(g["lr"] or first) / first for g in groups]
            for group, ratio in zip(groups, self.ratios):
                group["lr"] = sweep.lr_at(runner.iter) * ratio

        def after_train_iter(self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None,
                             outputs: Any = None) -> None:  # fmt: skip
            loss = (outputs or {}).get("loss")
            if loss is None:
                raise CliError("lr-find: the model's train_step returned no 'loss'")
            if sweep.record(runner.optim_wrapper.param_groups[0]["lr"], float(loss)):
                loop: Any = runner.train_loop  # both train loops stop on this flag
                loop.stop_training = True

    return SweepHook()


def sweep_config(cfg: Any, out_dir: str, steps: int) -> Any:
    """``cfg`` rewritten for the sweep: iteration-based, ``steps`` long, no validation,
    no checkpoints, no resume, no LR schedule, writing to ``out_dir``."""
    for key in ("train_dataloader", "optim_wrapper"):
        if cfg.get(key) is None:
            raise CliError(f"lr-find needs {key} in the config", exit_code=2)
    cfg.work_dir = out_dir
    cfg.train_cfg = dict(type="IterBasedTrainLoop", max_iters=steps, val_interval=steps + 1)
    for key in ("val_dataloader", "val_cfg", "val_evaluator", "test_dataloader", "test_cfg",
                "test_evaluator", "param_scheduler", "custom_hooks"):  # fmt: skip
        cfg.pop(key, None)
    cfg.resume = False
    cfg.launcher = "none"
    hooks = dict(cfg.get("default_hooks") or {})
    hooks["checkpoint"] = None
    cfg.default_hooks = hooks
    return cfg


def _lr_find(args: argparse.Namespace) -> int:
    from ..runner import Runner
    from .common import load_config
    from .run import _refuse_config_errors

    if not 0 < args.start_lr < args.end_lr:
        raise CliError("lr-find: need 0 < --start-lr < --end-lr", exit_code=2)
    if args.steps < 3:
        raise CliError("lr-find: --steps must be at least 3", exit_code=2)
    cfg = load_config(args.config, args.cfg_options, args.overrides)
    _refuse_config_errors(cfg, args.config)
    base = (
        args.work_dir
        or cfg.get("work_dir")
        or os.path.join("work_dirs", os.path.splitext(os.path.basename(args.config))[0])
    )
    out_dir = os.path.join(base, "lr_find")
    sweep = Sweep(args.start_lr, args.end_lr, args.steps, args.smooth, args.diverge)
    runner = Runner.from_cfg(sweep_config(cfg, out_dir, args.steps))
    runner.register_hook(sweep_hook(sweep))
    runner.train()
    print(report(sweep, out_dir))
    return 0


def report(sweep: Sweep, out_dir: str) -> str:
    """Write ``lr_find.csv`` (and ``lr_find.png`` with matplotlib); return the summary."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "lr_find.csv"), "w", encoding="utf-8") as file:
        file.write("step,lr,loss,smoothed_loss\n")
        for i, (lr, loss, smooth) in enumerate(zip(sweep.lrs, sweep.losses, sweep.smoothed)):
            file.write(f"{i},{lr:.6g},{loss:.6g},{smooth:.6g}\n")
    suggested = sweep.suggestion()
    lines = [f"{'lr':>10}  {'smoothed loss':>13}"]
    every = max(1, len(sweep.lrs) // 10)
    for lr, smooth in list(zip(sweep.lrs, sweep.smoothed))[::every]:
        lines.append(f"{lr:>10.3g}  {smooth:>13.4g}")
    stopped = len(sweep.lrs) < sweep.steps
    lines.append(f"{len(sweep.lrs)} steps" + (" (stopped: the loss diverged)" if stopped else ""))
    lines.append(
        f"suggested lr: {suggested:.3g}" if suggested else "suggested lr: none (too few steps)"
    )
    plot = _plot(sweep, suggested, os.path.join(out_dir, "lr_find.png"))
    lines.append(f"results: {out_dir}/lr_find.csv" + (f", plot {plot}" if plot else ""))
    return "\n".join(lines)


def _plot(sweep: Sweep, suggested: float | None, path: str) -> str | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axes = plt.subplots(figsize=(6, 4))
    finite = [(lr, s) for lr, s in zip(sweep.lrs, sweep.smoothed) if math.isfinite(s)]
    axes.plot([p[0] for p in finite], [p[1] for p in finite])
    if suggested:
        axes.axvline(suggested, color="red", linestyle="--", label=f"suggested {suggested:.3g}")
        axes.legend()
    axes.set_xscale("log")
    axes.set_xlabel("learning rate")
    axes.set_ylabel("smoothed loss")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)
    return path
