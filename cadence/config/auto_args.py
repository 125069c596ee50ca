"""Command-line options generated from a config's keys (mmengine's ``Config.auto_argparser``)."""

from __future__ import annotations

import warnings
from argparse import ArgumentParser
from collections.abc import Iterable, Mapping
from typing import Any


def config_path_parser(description: str | None = None, **kwargs: Any) -> ArgumentParser:
    """A parser with the one positional argument ``config`` (the config file path)."""
    parser = ArgumentParser(description=description, **kwargs)
    parser.add_argument("config", help="config file path")
    return parser


def add_args(parser: ArgumentParser, cfg: Mapping[str, Any], prefix: str = "") -> ArgumentParser:
    """Add a ``--<key.path>`` option to ``parser`` for every leaf of ``cfg``.

    str, int and float leaves take one value of their type; bool leaves become
    ``store_true`` flags; non-empty lists and tuples take one or more values of
    their first item's type; dicts recurse with ``key.`` prefixed. Other leaves
    (``None``, empty lists, objects) get no option and a ``UserWarning``.
    Options default to ``None`` (not given).
    """
    for key, value in cfg.items():
        name = f"--{prefix}{key}"
        if isinstance(value, bool):
            parser.add_argument(name, action="store_true")
        elif isinstance(value, int | float | str):
            parser.add_argument(name, type=type(value))
        elif isinstance(value, Mapping):
            add_args(parser, value, f"{prefix}{key}.")
        elif isinstance(value, list | tuple) and value:
            parser.add_argument(name, type=type(next(iter(value))), nargs="+")
        elif isinstance(value, Iterable) and not isinstance(value, list | tuple):
            parser.add_argument(name, nargs="+")
        else:
            warnings.warn(f"cannot parse key {prefix}{key} of type {type(value).__name__}; "
                          "no command-line option added", stacklevel=2)  # fmt: skip
    return parser
