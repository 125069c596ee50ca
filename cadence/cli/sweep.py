"""``cadence sweep CONFIG --param KEY=KIND:ARGS ... --trials N --metric NAME``.

Runs trials of the config with swept overrides, driven by Optuna (imported only
when the command runs); see :mod:`cadence.sweep` and docs/sweeps.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from .common import CliError, add_cfg_options


def add_sweep_command(sub: Any) -> None:
    """Register ``sweep`` on the ``cadence`` parser."""
    parser = sub.add_parser(
        "sweep",
        help="search hyper-parameters: trials of a config driven by Optuna",
        description="Run trials of CONFIG with the swept keys set per trial (as --cfg-options "
        "would), each a normal training run in <sweep_dir>/trial_<n>. The study lives in a "
        "database (<sweep_dir>/study.db unless --storage), so workers started with the same "
        "storage and study name share the sweep, and --resume continues a stopped one.",
    )
    parser.add_argument("config", help="config file (.py, .json, .yaml)")
    parser.add_argument(
        "--param", action="append", default=[], metavar="KEY=KIND:ARGS", required=True,
        help="a swept key: KEY=loguniform:LOW:HIGH, uniform:LOW:HIGH, int:LOW:HIGH or "
        "choice:A,B,...; repeat for several keys",
    )  # fmt: skip
    parser.add_argument("--trials", type=int, default=20, help="trials in all (default: 20)")
    parser.add_argument(
        "--metric", required=True,
        help="validation metric to optimize, as logged (val/accuracy/top1) or as the "
        "evaluator names it (accuracy/top1); a trial's value is its last validation's",
    )  # fmt: skip
    parser.add_argument(
        "--direction", choices=("maximize", "minimize"), default=None,
        help="default: inferred from the metric name (acc, top, f1... maximize; loss, error... "
        "minimize)",
    )  # fmt: skip
    parser.add_argument("--work-dir", help="the sweep folder (default: <work_dir>/sweep)")
    parser.add_argument(
        "--storage", metavar="URL",
        help="database URL of the study (default: sqlite:///<sweep_dir>/study.db); any URL "
        "Optuna accepts, e.g. postgresql://user:pass@host/db",
    )  # fmt: skip
    parser.add_argument("--study-name", help="default: the config file's stem")
    parser.add_argument(
        "--resume", action="store_true",
        help="continue the study (or join the workers running it); trials of dead workers "
        "run again, completed ones never",
    )  # fmt: skip
    parser.add_argument(
        "--prune",
        action="store_true",
        help="stop unpromising trials early (Optuna's MedianPruner, after each validation)",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed of the TPE sampler")
    parser.add_argument("--no-plot", action="store_true", help="do not write sweep.png")
    add_cfg_options(parser, help="override config keys of every trial")
    parser.set_defaults(func=_sweep)


def _sweep(args: argparse.Namespace) -> int:
    from ..sweep import SweepError, parse_params, run_sweep
    from .common import load_config
    from .run import _refuse_config_errors

    try:
        import optuna  # noqa: F401
    except ImportError as exc:
        raise CliError(
            "`cadence sweep` needs optuna: pip install optuna  (or: pip install 'cadence[sweep]')"
        ) from exc
    try:
        specs = parse_params(args.param)  # a bad spec fails before the config is read
        _refuse_config_errors(load_config(args.config, args.cfg_options), args.config)
        run_sweep(
            args.config, specs, trials=args.trials, metric=args.metric,
            direction=args.direction, work_dir=args.work_dir, storage=args.storage,
            study_name=args.study_name, resume=args.resume, cfg_options=args.cfg_options,
            prune=args.prune, seed=args.seed, plot=not args.no_plot,
        )  # fmt: skip
    except SweepError as exc:
        raise CliError(str(exc), exc.exit_code) from exc
    except KeyboardInterrupt:
        raise CliError("interrupted; continue the sweep with --resume", 130) from None
    return 0
