"""The ``cadence`` command line.

Importing this package is cheap: each command imports what it needs (configs,
registries, torch) only when it runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from .check import add_check_command
from .common import CliError
from .listing import add_list_command
from .lr_find import add_lr_find_command
from .print_config import add_print_config_command
from .publish import add_publish_command
from .run import add_run_commands
from .sweep import add_sweep_command

__all__ = ["CliError", "build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cadence`` command."""
    parser = argparse.ArgumentParser(
        prog="cadence", description="Train, evaluate and inspect cadence configs."
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_run_commands(sub)
    add_check_command(sub)
    add_list_command(sub)
    add_print_config_command(sub)
    from ..visualization.plot import add_plot_command

    add_plot_command(sub)
    add_publish_command(sub)
    add_lr_find_command(sub)
    add_sweep_command(sub)
    for command in sub.choices.values():  # `cadence train --debug cfg.py` works too
        command.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                             help="show tracebacks on errors")  # fmt: skip
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (:class:`~cadence.utils.exit_codes.ExitCode`).

    Under ``--nproc`` the code is also left for the parent (see
    :func:`~cadence.utils.exit_codes.report`), however the command ends."""
    from ..utils.exit_codes import ExitCode, report, signal_code

    try:
        code = _main(argv)
    except SystemExit as exc:
        report(exc.code if isinstance(exc.code, int) else ExitCode.CONFIG_ERROR)
        raise
    except KeyboardInterrupt:
        report(signal_code(2))  # Python ends the process by SIGINT: 130 to a shell
        raise
    except BaseException:
        report(ExitCode.FAILED)
        raise
    report(code)
    return code


def _main(argv: Sequence[str] | None) -> int:
    from ..utils.exit_codes import ExitCode

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # trailing KEY=VALUE overrides may follow options (detectron2's style)
        if not hasattr(args, "overrides") or any("=" not in w or w.startswith("-") for w in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.overrides = [*args.overrides, *extra]
    args.argv = argv
    from .common import shadowing_folder, shadowing_warning

    shadow = shadowing_folder()
    if shadow is not None:
        print(shadowing_warning(shadow), file=sys.stderr)
    from ..checkpoint import CheckpointError
    from ..config import ConfigError
    from ..registry import BuildError, RegistryError
    from ..resilience.work_dir_lock import WorkDirLockedError

    try:
        return int(args.func(args))
    except BrokenPipeError:  # output piped into `head` and the like
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (
        ConfigError,
        RegistryError,
        BuildError,
        CliError,
        CheckpointError,
        WorkDirLockedError,
    ) as exc:
        if args.debug:
            raise
        print(_explained(exc), file=sys.stderr)
        if isinstance(exc, CliError):
            return exc.exit_code
        unverifiable = isinstance(exc, CheckpointError)
        return int(ExitCode.CHECKPOINT_UNVERIFIABLE if unverifiable else ExitCode.CONFIG_ERROR)


def _explained(exc: BaseException) -> str:
    """The error's paragraph; a lookup that failed because a downstream package's module did
    not import (mmcv.ops without compiled mmcv) is told as that import's failure."""
    cause = exc.__cause__
    if isinstance(cause, ImportError):
        from ..compat.failures import import_failure

        message = import_failure(cause)
        if message is not None:
            return message
    return f"cadence: error: {exc}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
