"""The ``cadence`` command line."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from ..config import Config, ConfigError, DictAction, Origin
from ..config.merge import get_by_path
from ..config.provenance import split_key
from ..registry import BuildError, RegistryError
from ..visualization.plot import add_plot_command
from .run import add_run_commands


def _print_config(args: argparse.Namespace) -> int:
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    if args.provenance:
        values = cfg.to_dict()
        for key, origin in cfg.provenance().items():
            value = get_by_path(values, split_key(key))
            print(f"{key} = {value!r}  # {_describe(origin)}")
        return 0
    print(cfg._format("." + args.format), end="")
    return 0


def _describe(origin: Origin | None) -> str:
    """``file:line`` with the file relative to the working directory when inside it."""
    if origin is None:
        return "not recorded"
    name = origin.filename
    if os.path.isabs(name):
        rel = os.path.relpath(name)
        name = name if rel.startswith("..") else rel
    return str(Origin(name, origin.line, origin.note))


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cadence`` command."""
    parser = argparse.ArgumentParser(prog="cadence", description=__doc__)
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)
    show = sub.add_parser("print-config", help="print the resolved config")
    show.add_argument("config", help="config file (.py, .json, .yaml)")
    show.add_argument(
        "--provenance", action="store_true", help="show the file and line that set each value"
    )
    show.add_argument("--format", choices=["py", "json", "yaml"], default="py")
    show.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        default={},
        metavar="KEY=VALUE",
        help="override config keys, e.g. optim_wrapper.optimizer.lr=0.01",
    )
    show.set_defaults(func=_print_config)
    add_plot_command(sub)
    add_run_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # trailing KEY=VALUE overrides may follow options (detectron2's style)
        if not hasattr(args, "overrides") or any("=" not in w or w.startswith("-") for w in extra):
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args.overrides = [*args.overrides, *extra]
    try:
        return int(args.func(args))
    except BrokenPipeError:  # output piped into `head` and the like
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ConfigError, RegistryError, BuildError) as exc:
        if args.debug:
            raise
        print(f"cadence: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
