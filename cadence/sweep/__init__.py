"""Hyper-parameter sweeps: trials of a config run by cadence, driven by Optuna.

``cadence sweep cfg.py --param optim_wrapper.optimizer.lr=loguniform:1e-4:1e-1
--trials 20 --metric val/accuracy/top1`` (or :func:`run_sweep`). Optuna is an
optional package (``pip install 'cadence[sweep]'``), imported only when a sweep runs.
"""

from __future__ import annotations

from .driver import infer_direction, run_sweep
from .errors import SweepError
from .params import KINDS, ParamSpec, parse_param, parse_params
from .trial import TrialReportHook, find_metric

__all__ = [
    "KINDS", "ParamSpec", "SweepError", "TrialReportHook", "find_metric", "infer_direction",
    "parse_param", "parse_params", "run_sweep",
]  # fmt: skip
