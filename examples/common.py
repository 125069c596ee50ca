"""What every example's ``train.py`` shares: ``[CONFIG] [--work-dir DIR] [--cfg-options k=v ...]``
turned into a runner."""

from __future__ import annotations

import argparse
from typing import Any


def runner_from_command_line(description: str | None, default_config: str) -> Any:
    """Parse the example's command line and build a Runner from the config it names."""
    from cadence.config import Config, DictAction
    from cadence.runner import Runner

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("config", nargs="?", default=default_config)
    parser.add_argument("--work-dir")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, default={})
    args = parser.parse_args()

    cfg = Config.fromfile(args.config)
    cfg.merge_from_dict(args.cfg_options)
    if args.work_dir:
        cfg.work_dir = args.work_dir
    # an example run starts anew and replaces the previous example run's checkpoints in its
    # work dir (cadence train refuses that unless told: --overwrite)
    cfg.setdefault("overwrite", True)
    return Runner.from_cfg(cfg)
