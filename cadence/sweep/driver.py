"""Run a sweep: open (or join) the study, run trials until the sweep has its number of
trials, then report. Every worker of a sweep runs this same loop on the shared study."""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .errors import SweepError
from .params import ParamSpec, check_keys, parse_params
from .report import plot_sweep, print_report
from .study import (
    budget_left,
    creation_lock,
    default_storage,
    fail_dead_trials,
    open_storage,
    open_study,
)
from .trial import run_trial
from .worker import run_one

if TYPE_CHECKING:
    from ..config import Config

#: a worker stops after this many trials in a row raised
MAX_FAILURES_IN_A_ROW = 3


def infer_direction(metric: str) -> str:
    """``'maximize'`` for accuracy-like metric names, ``'minimize'`` for loss-like ones
    (the name fragments ``save_best='auto'`` and early stopping use)."""
    from ..hooks.early_stopping_hook import infer_rule

    try:
        return "maximize" if infer_rule(metric) == "greater" else "minimize"
    except ValueError:
        raise SweepError(
            f"cannot tell whether a larger {metric} is better; pass --direction maximize "
            "or --direction minimize"
        ) from None


def _config_loader(config: str | Config, cfg_options: Sequence[str]) -> Any:
    """A function returning a fresh copy of the config with ``cfg_options`` merged."""
    from ..config import Config
    from ..config.dict_action import parse_options

    options = parse_options(list(cfg_options))
    if isinstance(config, str):
        if os.getcwd() not in sys.path:  # custom_imports may name modules of the cwd
            sys.path.insert(0, os.getcwd())
        base = Config.fromfile(config)
    else:
        base = copy.deepcopy(config)
    if options:
        base.merge_from_dict(options)

    def load() -> Config:
        return copy.deepcopy(base)

    return load


def sweep_dir_for(config: str | Config, cfg: Config, work_dir: str | None) -> str:
    """``work_dir``, else ``<the config's work_dir>/sweep`` (``work_dirs/<stem>/sweep``)."""
    if work_dir:
        return work_dir
    base = cfg.get("work_dir")
    if base is None:
        stem = os.path.splitext(os.path.basename(config))[0] if isinstance(config, str) else "sweep"
        base = os.path.join("work_dirs", stem)
    return os.path.join(str(base), "sweep")


def run_sweep(
    config: str | Config,
    params: Sequence[str | ParamSpec],
    *,
    trials: int,
    metric: str,
    direction: str | None = None,
    work_dir: str | None = None,
    storage: str | None = None,
    study_name: str | None = None,
    resume: bool = False,
    cfg_options: Sequence[str] = (),
    prune: bool = False,
    seed: int | None = None,
    plot: bool = True,
) -> Any:
    """Sweep ``params`` of ``config`` over ``trials`` trials; return the Optuna study.

    Each trial is a training run of the config with the trial's values merged in
    (as ``--cfg-options`` would) in ``<sweep_dir>/trial_<number>``; its value is
    ``metric`` at the run's last validation. See ``docs/sweeps.md``.
    """
    if not isinstance(trials, int) or trials < 1:
        raise SweepError(f"--trials must be a positive integer, got {trials!r}")
    if direction not in (None, "maximize", "minimize"):
        raise SweepError(f"--direction must be 'maximize' or 'minimize', got {direction!r}")
    specs = parse_params(params)
    load = _config_loader(config, cfg_options)
    cfg = load()
    check_keys(specs, cfg)
    direction = direction or infer_direction(metric)
    sweep_dir = sweep_dir_for(config, cfg, work_dir)
    if "://" in sweep_dir:
        raise SweepError(f"the sweep folder must be a local path, got {sweep_dir!r}")
    os.makedirs(sweep_dir, exist_ok=True)
    url = storage or default_storage(sweep_dir)
    name = study_name or (
        os.path.splitext(os.path.basename(config))[0] if isinstance(config, str) else "sweep"
    )
    return _drive(load, specs, trials, metric, direction, sweep_dir, url, name, resume, prune,
                  seed, plot)  # fmt: skip


def _drive(load: Any, specs: list[ParamSpec], trials: int, metric: str, direction: str,
           sweep_dir: str, url: str, name: str, resume: bool, prune: bool, seed: int | None,
           plot: bool) -> Any:  # fmt: skip
    import optuna

    sweep = {"metric": metric, "direction": direction,
             "params": {s.key: s.describe() for s in specs}}  # fmt: skip
    pruner = optuna.pruners.MedianPruner() if prune else optuna.pruners.NopPruner()
    with creation_lock(url):
        sampler = optuna.samplers.TPESampler(seed=seed)
        study = open_study(open_storage(url), name, direction, sweep, resume, sampler, pruner)
    print(f"sweep '{name}': {trials} trials of {metric} ({direction}) in {sweep_dir}, "
          f"storage {url}")  # fmt: skip

    def objective(trial: Any) -> float:
        return run_trial(trial, load, specs, metric, sweep_dir, prune)

    failures = 0
    while True:
        for number in fail_dead_trials(study):
            print(f"sweep: trial {number} lost its worker; it is marked FAIL and queued again")
        if budget_left(study, trials) == 0:
            break
        try:
            done = run_one(study, objective)
        except SweepError:
            raise
        except Exception as exc:  # the trial raised; it is recorded FAIL with its error
            failures += 1
            print(f"sweep: a trial failed with {type(exc).__name__}: {exc}", file=sys.stderr)
            if failures >= MAX_FAILURES_IN_A_ROW:
                raise SweepError(
                    f"{failures} trials in a row failed, the last with {type(exc).__name__}: "
                    f"{exc}; see the trials' logs in {sweep_dir}",
                    exit_code=1,
                ) from exc
            continue
        failures = 0
        print(f"sweep: trial {done.number} {done.state.name}, {metric} = {done.value}")
    print_report(study, specs, metric)
    if plot:
        _plot(study, specs, metric, os.path.join(sweep_dir, "sweep.png"))
    return study


def _plot(study: Any, specs: Sequence[ParamSpec], metric: str, out: str) -> None:
    try:
        plot_sweep(study, specs, metric, out)
    except ImportError:
        print("sweep: no plot: matplotlib is not installed (pip install matplotlib)")
        return
    print(f"saved {out}")
