"""``cadence check CONFIG``: validate every ``type`` and argument without building anything;
with ``--dry-run``, also build the run for real and take a few steps (see :mod:`.dry_run`)."""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_cfg_options, load_config


def add_check_command(sub: Any) -> None:
    """Register ``check`` on the ``cadence`` parser."""
    parser = sub.add_parser(
        "check",
        help="validate a config's types and arguments without building it",
        description="Check every `type` of a config against the registry its key path builds "
        "from and every argument against the constructor's signature; report all problems "
        "with key paths, file:line and suggestions. Exit 0 when clean, 2 otherwise.",
    )
    parser.add_argument("config", help="config file (.py, .json, .yaml)")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="then build datasets, model, optimizer and strategy on one process and take "
        "two training and two validation steps; nothing is written to the work_dir",
    )
    add_cfg_options(parser)
    parser.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="more overrides, detectron2 style"
    )
    parser.set_defaults(func=_check)


def _check(args: argparse.Namespace) -> int:
    from .config_check import check_config

    cfg = load_config(args.config, args.cfg_options, args.overrides)
    checker = check_config(cfg)
    for problem in checker.problems:
        print(problem)
    errors = len(checker.errors)
    warnings = len(checker.problems) - errors
    tail = f", {warnings} warning(s)" if warnings else ""
    if errors:
        print(f"{args.config}: {errors} problem(s) in {checker.checked} components checked{tail}")
        return 2
    print(f"config OK: {checker.checked} components checked{tail}")
    if args.dry_run:
        from .dry_run import dry_run

        for line in dry_run(cfg, debug=bool(getattr(args, "debug", False))).lines():
            print(line)
        print("dry run OK")
    return 0
