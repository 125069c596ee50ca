"""``cadence train|val|test CONFIG``: run a config from the command line.

Overrides come as ``--cfg-options a.b=1`` or as trailing ``a.b=1`` words
(detectron2's style); both are merged into the config before the runner is built.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from ..config import Config, DictAction
from ..config.dict_action import parse_options


def add_run_commands(sub: Any) -> None:
    """Register ``train``, ``val`` and ``test`` on the ``cadence`` parser."""
    train = sub.add_parser("train", help="train (and validate) a config")
    _common(train)
    train.add_argument(
        "--resume",
        nargs="?",
        const="auto",
        default=None,
        metavar="CHECKPOINT",
        help="resume from CHECKPOINT, or from the latest one in the work dir",
    )
    train.add_argument("--amp", action="store_true", help="automatic mixed precision")
    train.add_argument(
        "--auto-scale-lr",
        action="store_true",
        help="scale the lr by total batch size / auto_scale_lr.base_batch_size",
    )
    train.add_argument("--seed", type=int, default=None)
    train.add_argument("--deterministic", action="store_true")
    train.set_defaults(func=_run, mode="train")
    for mode in ("val", "test"):
        parser = sub.add_parser(mode, help=f"{mode} a checkpoint")
        _common(parser)
        parser.add_argument("checkpoint", help="checkpoint to load the weights from")
        parser.set_defaults(func=_run, mode=mode)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="config file (.py, .json, .yaml)")
    parser.add_argument("--work-dir", help="where to write checkpoints and logs")
    parser.add_argument(
        "--launcher",
        choices=["none", "pytorch", "slurm", "mpi"],
        default=None,
        help="how the processes were started (torchrun: pytorch)",
    )
    parser.add_argument(
        "--cfg-options",
        nargs="+",
        action=DictAction,
        default={},
        metavar="KEY=VALUE",
        help="override config keys",
    )
    parser.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="more overrides, detectron2 style"
    )


def build_config(args: argparse.Namespace) -> Config:
    """Load the config and apply every command-line override to it."""
    cfg = Config.fromfile(args.config)
    options = dict(args.cfg_options)
    options.update(parse_options(args.overrides))
    if options:
        cfg.merge_from_dict(options)
    if args.work_dir:
        cfg.work_dir = args.work_dir
    elif cfg.get("work_dir") is None:
        stem = os.path.splitext(os.path.basename(args.config))[0]
        cfg.work_dir = os.path.join("work_dirs", stem)
    if args.launcher is not None:
        cfg.launcher = args.launcher
    if args.mode == "train":
        _train_switches(cfg, args)
    else:
        cfg.load_from = args.checkpoint
    return cfg


def _train_switches(cfg: Config, args: argparse.Namespace) -> None:
    if args.resume == "auto":
        cfg.resume = True
    elif args.resume is not None:
        cfg.resume, cfg.load_from = True, args.resume
    if args.amp:
        wrapper = cfg.get("optim_wrapper")
        if wrapper is None:
            raise SystemExit("cadence: error: --amp needs optim_wrapper in the config")
        if wrapper.get("type", "OptimWrapper") in ("OptimWrapper", "AmpOptimWrapper"):
            wrapper.type = "AmpOptimWrapper"
            wrapper.setdefault("loss_scale", "dynamic")
    if args.auto_scale_lr:
        scale = cfg.get("auto_scale_lr")
        if not scale or "base_batch_size" not in scale:
            raise SystemExit(
                "cadence: error: --auto-scale-lr needs auto_scale_lr.base_batch_size in the config"
            )
        scale.enable = True
    if args.seed is not None or args.deterministic:
        randomness = dict(cfg.get("randomness") or {})
        if args.seed is not None:
            randomness["seed"] = args.seed
        if args.deterministic:
            randomness["deterministic"] = True
        cfg.randomness = randomness


def _run(args: argparse.Namespace) -> int:
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # custom_imports of the project, as `python -m` would
    cfg = build_config(args)
    from ..registry import RUNNERS
    from ..runner import Runner

    runner = RUNNERS.build(cfg) if cfg.get("runner_type") else Runner.from_cfg(cfg)
    if args.mode == "train":
        runner.train()
    else:
        metrics = getattr(runner, args.mode)()
        if runner.rank == 0:
            print({k: float(v) if hasattr(v, "__float__") else v for k, v in metrics.items()})
    # Only after success: a failed rank must exit at once (closing its sockets makes the
    # other ranks fail fast) instead of waiting for them in a teardown barrier.
    runner.strategy.teardown()
    return 0
