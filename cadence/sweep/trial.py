"""One trial of a sweep: a normal cadence run of the config with the trial's overrides.

Each trial trains through cadence's own :class:`~cadence.runner.Runner` in its
work dir ``<sweep_dir>/trial_<number>``; a :class:`TrialReportHook` reports the
swept metric to Optuna after each validation and stops the run early when the
pruner says so. The trial's value is the metric of the last validation.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..hooks import Hook
from .errors import SweepError
from .params import ParamSpec
from .study import worker_id

if TYPE_CHECKING:
    from ..config import Config
    from ..contracts import RunnerProtocol


def find_metric(metrics: Mapping[str, Any], name: str) -> float:
    """The value of ``name`` among a validation's ``metrics``; ``'val/acc'`` also finds
    ``'acc'`` (the logs show validation metrics with the ``val/`` prefix)."""
    for key in (name, name[len("val/") :] if name.startswith("val/") else None):
        if key is not None and key in metrics:
            return float(metrics[key])
    from ..utils import did_you_mean

    shown = sorted(f"val/{k}" for k in metrics)
    raise SweepError(
        f"--metric {name}: the validation reports no such metric; it reports {shown}."
        f"{did_you_mean(name, shown)}"
    )


class TrialReportHook(Hook):
    """Report ``metric`` to the Optuna ``trial`` after each validation of a training run;
    with ``prune``, stop training when the trial's pruner says it should be pruned."""

    priority = "LOWEST"

    def __init__(self, trial: Any, metric: str, prune: bool = False) -> None:
        self.trial = trial
        self.metric = metric
        self.prune = prune
        self.value: float | None = None
        self.pruned_at: int | None = None
        self._training = False

    def before_train(self, runner: RunnerProtocol) -> None:
        self._training = True

    def after_train(self, runner: RunnerProtocol) -> None:
        self._training = False

    def after_val_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        """Report this validation's value; stop the run if the trial is to be pruned."""
        if not self._training:
            return
        self.value = find_metric(metrics or {}, self.metric)
        step = runner.epoch if runner.train_loop_by_epoch else runner.iter
        self.trial.report(self.value, step)
        if self.prune and self.trial.should_prune():
            self.pruned_at = step
            loop: Any = runner.train_loop
            loop.stop_training = True
            runner.logger.info(f"Sweep: trial {self.trial.number} pruned at step {step}")


def run_trial(
    trial: Any,
    load_config: Callable[[], Config],
    specs: Sequence[ParamSpec],
    metric: str,
    sweep_dir: str,
    prune: bool = False,
) -> float:
    """Train one trial; return its metric. Raises ``optuna.TrialPruned`` when pruned
    (the run stops cleanly and its work dir stays)."""
    import optuna

    from ..registry import RUNNERS
    from ..runner import Runner

    work_dir = os.path.join(sweep_dir, f"trial_{trial.number}")
    trial.set_user_attr("worker", worker_id())
    trial.set_user_attr("work_dir", work_dir)
    try:
        overrides = {spec.key: spec.suggest(trial) for spec in specs}
        cfg = load_config()
        cfg.merge_from_dict(overrides)
        cfg.work_dir = work_dir
        runner = RUNNERS.build(cfg) if cfg.get("runner_type") else Runner.from_cfg(cfg)
        hook = TrialReportHook(trial, metric, prune)
        runner.register_hook(hook)
        try:
            runner.train()
        finally:
            runner.close(barrier=False)
    except SweepError:
        raise
    except Exception as exc:
        trial.set_user_attr("error", f"{type(exc).__name__}: {exc}"[:500])
        raise
    if hook.pruned_at is not None:
        raise optuna.TrialPruned(f"pruned at step {hook.pruned_at}")
    if hook.value is None:
        raise SweepError(
            f"trial {trial.number} trained without validating, so it has no {metric}; "
            "set val_dataloader/val_evaluator/val_cfg, and a train_cfg.val_interval the "
            "run reaches"
        )
    if not math.isfinite(hook.value):
        trial.set_user_attr("error", f"{metric} = {hook.value}")
    return hook.value
