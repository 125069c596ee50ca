"""Pieces shared by the ``cadence`` subcommands."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any


class CliError(Exception):
    """An error the command reports in one paragraph (no traceback) before exiting."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def add_cfg_options(parser: argparse.ArgumentParser, help: str = "override config keys") -> None:
    """Add ``--cfg-options KEY=VALUE ...`` to ``parser``.

    The words are kept as written and parsed by :func:`load_config` (as
    :class:`~cadence.config.DictAction` would), so that building the parser
    imports nothing from cadence's config package.
    """
    parser.add_argument(
        "--cfg-options",
        nargs="+",
        action="extend",
        default=[],
        metavar="KEY=VALUE",
        help=help,
    )


def describe_origin(origin: Any) -> str:
    """``file:line`` of a config :class:`~cadence.config.Origin`, the file relative to
    the working directory when inside it; ``'not recorded'`` for ``None``."""
    from ..config import Origin

    if origin is None:
        return "not recorded"
    name = origin.filename
    if os.path.isabs(name):
        rel = os.path.relpath(name)
        name = name if rel.startswith("..") else rel
    return str(Origin(name, origin.line, origin.note))


def shadowing_folder(directory: str | None = None) -> str | None:
    """The ``cadence`` folder in ``directory`` (default: the working directory) when it is
    not the package running now: there, ``import cadence`` in a script or ``python -c``
    finds that folder instead of the installed package. ``None`` otherwise."""
    import cadence

    folder = os.path.join(directory or os.getcwd(), "cadence")
    if not os.path.isdir(folder):
        return None
    package = os.path.dirname(os.path.abspath(cadence.__file__ or ""))
    return None if os.path.realpath(folder) == os.path.realpath(package) else folder


def shadowing_warning(folder: str) -> str:
    """One paragraph saying what the folder found by :func:`shadowing_folder` breaks."""
    import cadence

    package = os.path.dirname(os.path.abspath(cadence.__file__ or ""))
    return (
        f"cadence: warning: the folder {folder} shadows the cadence package installed at "
        f"{package}: Python scripts and `python -c` run from this directory import that "
        "folder as `cadence` (ImportError: cannot import name ... from 'cadence'). Rename "
        "the folder or run from another directory."
    )


def load_config(path: str, cfg_options: Sequence[str] = (), overrides: Sequence[str] = ()) -> Any:
    """Load ``path`` (its ``custom_imports`` may name modules of the working directory,
    as under ``python -m``) and merge the ``KEY=VALUE`` overrides into it, later
    ones winning; a malformed one raises :class:`~cadence.config.ConfigError`."""
    import sys

    from ..config import Config
    from ..config.dict_action import parse_options

    options = parse_options([*cfg_options, *overrides])  # a typo fails before any import
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    cfg = Config.fromfile(path, import_custom_modules=False)
    open_downstream_door(cfg, path)
    if cfg.get("custom_imports"):
        from ..config.config import import_custom

        import_custom(cfg["custom_imports"], path)
    scope = cfg.get("default_scope")
    if isinstance(scope, str) and scope not in _OWN_SCOPES:  # after custom_imports: they
        _import_models_or_explain(scope)  # may provide what the models import (stand-ins)
    if options:
        cfg.merge_from_dict(options)
    return cfg


# Scopes that are cadence's own: a config naming one needs no alias.
_OWN_SCOPES = (None, "cadence", "mmengine")


def open_downstream_door(cfg: Any, path: str) -> None:
    """Door (a): a config of a downstream OpenMMLab package (``default_scope='mmdet'``, or
    ``custom_imports``) gets the ``mmengine`` alias before that package is imported; a
    scope whose package is not installed is a :class:`CliError` (one paragraph, exit 2)."""
    import importlib.util

    scope = cfg.get("default_scope")
    if scope in _OWN_SCOPES and not cfg.get("custom_imports"):
        return
    from ..compat import install

    install()
    if scope in _OWN_SCOPES or not isinstance(scope, str):
        return
    if importlib.util.find_spec(scope) is None:
        raise CliError(
            f"{path}: config key 'default_scope' is {scope!r}, but the package '{scope}' is "
            f"not installed, so its models, datasets and transforms cannot be found; "
            f"install it (e.g. `pip install --no-deps {scope}` plus its dependencies, see "
            f"docs/openmmlab.md), or set default_scope to a package that is installed"
        )


def _import_models_or_explain(scope: str) -> None:
    """With mmcv-lite (no compiled ops), import the scope's models now, so that a package
    needing ``mmcv.ops`` fails in one paragraph rather than in each registry lookup."""
    import importlib
    import importlib.util

    from ..compat.failures import compiled_mmcv_absent, import_failure

    if not compiled_mmcv_absent() or importlib.util.find_spec(f"{scope}.models") is None:
        return
    try:
        importlib.import_module(f"{scope}.models")
    except ImportError as exc:
        message = import_failure(exc)
        if message is None:
            raise
        raise CliError(message.removeprefix("cadence: error: ")) from None
