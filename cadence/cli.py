"""The ``cadence`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .config import Config, ConfigError, DictAction


def _print_config(args: argparse.Namespace) -> int:
    cfg = Config.fromfile(args.config)
    if args.cfg_options:
        cfg.merge_from_dict(args.cfg_options)
    if args.provenance:
        for key, origin in cfg.provenance().items():
            value = _leaf(cfg, key)
            print(f"{key} = {value!r}  # {origin if origin is not None else 'set in code'}")
        return 0
    print(cfg._format("." + args.format), end="")
    return 0


def _leaf(cfg: Config, key: str) -> object:
    node: object = cfg._cfg_dict
    for part in key.split("."):
        node = node[int(part)] if isinstance(node, (list, tuple)) else dict.__getitem__(node, part)  # type: ignore[index]
    return node


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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as exc:
        if args.debug:
            raise
        print(f"cadence: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
