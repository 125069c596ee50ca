"""``cadence print-config CONFIG``: the resolved config, optionally with provenance."""

from __future__ import annotations

import argparse
from typing import Any

from .common import add_cfg_options, describe_origin, load_config


def add_print_config_command(sub: Any) -> None:
    """Register ``print-config`` on the ``cadence`` parser."""
    show = sub.add_parser("print-config", help="print the resolved config")
    show.add_argument("config", help="config file (.py, .json, .yaml)")
    show.add_argument(
        "--provenance", action="store_true", help="show the file and line that set each value"
    )
    show.add_argument("--format", choices=["py", "json", "yaml"], default="py")
    add_cfg_options(show, help="override config keys, e.g. optim_wrapper.optimizer.lr=0.01")
    show.set_defaults(func=_print_config)


def _print_config(args: argparse.Namespace) -> int:
    from ..config.merge import get_by_path
    from ..config.provenance import split_key

    cfg = load_config(args.config, args.cfg_options)
    if args.provenance:
        values = cfg.to_dict()
        for key, origin in cfg.provenance().items():
            value = get_by_path(values, split_key(key))
            print(f"{key} = {value!r}  # {describe_origin(origin)}")
        return 0
    print(cfg._format("." + args.format), end="")
    return 0
