"""``cadence train|val|test CONFIG``: run a config from the command line.

Overrides come as ``--cfg-options a.b=1`` or as trailing ``a.b=1`` words
(detectron2's style); both are merged into the config before the runner is built.
``--nproc N`` re-runs the command under torchrun (see :mod:`.launch`);
``test --out FILE.pkl`` also dumps the predictions with a ``DumpResults`` metric (one
file per set, ``FILE.<name>.pkl``, when ``test_dataloader`` holds several sets);
``test --tta`` tests with the config's ``tta_model`` and ``tta_pipeline`` (see :mod:`.tta`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .common import CliError, add_cfg_options, load_config
from .launch import add_nproc_argument, inside_launched_process, relaunch

if TYPE_CHECKING:
    from ..config import Config


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
    train.add_argument(
        "--overwrite",
        action="store_true",
        help="start anew even where the work dir holds an earlier run's checkpoints "
        "(this run may then replace them)",
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
        _common(parser, checkpoint=True)
        if mode == "test":
            parser.add_argument(
                "--out",
                type=_pickle_path,
                metavar="FILE.pkl",
                help="also dump the model's predictions to this pickle file (rank 0 writes "
                "it); with several test sets, one file per set: FILE.<set name>.pkl",
            )
            parser.add_argument(
                "--tta",
                action="store_true",
                help="test-time augmentation: wrap model in tta_model, test with tta_pipeline",
            )
        parser.set_defaults(func=_run, mode=mode)


def _common(parser: argparse.ArgumentParser, checkpoint: bool = False) -> None:
    parser.add_argument("config", help="config file (.py, .json, .yaml)")
    if checkpoint:  # before the overrides, which would otherwise swallow it
        parser.add_argument(
            "checkpoint", help="checkpoint to load the weights from: a file, a work dir (its "
            "last checkpoint), or a name in the config's work dir (as last_checkpoint holds it)",
        )  # fmt: skip
    parser.add_argument("--work-dir", help="where to write checkpoints and logs")
    parser.add_argument(
        "--launcher",
        choices=["none", "pytorch", "slurm", "mpi"],
        default=None,
        help="how the processes were started (torchrun: pytorch)",
    )
    parser.add_argument(
        "--verbose",
        action="store_true",
        help="also print the environment, the full config and the hook table on the console "
        "(they are always in the log file, the saved config and hooks.txt of the work dir)",
    )
    add_nproc_argument(parser)
    add_cfg_options(parser)
    parser.add_argument(
        "overrides", nargs="*", metavar="KEY=VALUE", help="more overrides, detectron2 style"
    )


def _pickle_path(text: str) -> str:
    if not text.endswith((".pkl", ".pickle")):
        raise argparse.ArgumentTypeError(f"the output file must end with .pkl or .pickle: {text!r}")
    return text


def build_config(args: argparse.Namespace) -> Config:
    """Load the config and apply every command-line override to it."""
    resume = getattr(args, "resume", None)
    if resume not in (None, "auto") and "=" in resume and not os.path.exists(resume):
        # `--resume lr=0.1`: an override that argparse took for the checkpoint
        args.overrides, args.resume = [resume, *args.overrides], "auto"
    cfg = load_config(args.config, args.cfg_options, args.overrides)
    if args.work_dir:
        cfg.work_dir = args.work_dir
    elif cfg.get("work_dir") is None:
        stem = os.path.splitext(os.path.basename(args.config))[0]
        cfg.work_dir = os.path.join("work_dirs", stem)
    trained_in = cfg.work_dir  # where a checkpoint name from a pointer is looked up
    args.trained_in = trained_in
    if args.mode != "train" and not args.work_dir:
        from ..fileio import join_path

        cfg.work_dir = join_path(cfg.work_dir, args.mode)  # evaluations never touch its files
    if args.launcher is not None:
        cfg.launcher = args.launcher
    if args.mode == "train":
        _train_switches(cfg, args)
        if args.resume not in (None, "auto"):
            cfg.load_from = _resolve(args.resume, trained_in, "--resume")
    else:
        cfg.load_from = _resolve(args.checkpoint, trained_in, "CHECKPOINT")
    if getattr(args, "tta", False):
        from .tta import apply_tta

        apply_tta(cfg)
    if getattr(args, "out", None):
        cfg.test_evaluator = dump_every_set(cfg, args.out)
    return cfg


def _refuse_config_errors(cfg: Config, config_file: str) -> None:
    """Stop before any work with the errors ``cadence check`` reports, in its words."""
    from .config_check import check_config

    errors = check_config(cfg).errors
    if errors:
        lines = "\n".join(str(problem) for problem in errors)
        raise CliError(
            f"{config_file}: {len(errors)} problem(s) in the config "
            f"(`cadence check` reports the same):\n{lines}"
        )


def dump_every_set(cfg: Config, out_file: str) -> Any:
    """``cfg.test_evaluator`` with a ``DumpResults`` metric for ``--out``; with several
    test sets, one per set, each writing ``<stem>.<set name><ext>`` beside ``out_file``."""
    from ..loops.eval_sets import is_single_loader, split_eval_sets

    loaders, evaluator = cfg.get("test_dataloader"), cfg.get("test_evaluator")
    if loaders is None or is_single_loader(loaders):
        return with_dump_results(evaluator, out_file)
    try:
        sets = split_eval_sets(loaders, evaluator, "test")
    except ValueError as exc:  # the config check names the same problem
        raise CliError(str(exc)) from exc
    stem, ext = os.path.splitext(out_file)
    dumped = {name: with_dump_results(ev, f"{stem}.{name}{ext}") for name, _, ev in sets}
    return list(dumped.values()) if isinstance(loaders, (list, tuple)) else dumped


def with_dump_results(evaluator: Any, out_file: str) -> Any:
    """``evaluator`` (a runner ``test_evaluator`` config: a metric, a list of them or
    ``dict(metrics=...)``) with a ``DumpResults`` metric appended, so that the
    predictions are also written to ``out_file``."""
    dump = {"type": "DumpResults", "out_file_path": out_file}
    if evaluator is None:
        return [dump]
    if isinstance(evaluator, (list, tuple)):
        return [*evaluator, dump]
    if isinstance(evaluator, Mapping) and "metrics" in evaluator:
        spec = dict(evaluator.items())
        metrics = spec["metrics"]
        metrics = list(metrics) if isinstance(metrics, (list, tuple)) else [metrics]
        spec["metrics"] = [*metrics, dump]
        return spec
    return [evaluator, dump]


def _train_switches(cfg: Config, args: argparse.Namespace) -> None:
    if args.resume == "auto":
        cfg.resume = True
    elif args.resume is not None:
        cfg.resume, cfg.load_from = True, args.resume
    if args.overwrite:
        cfg.overwrite = True
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


def _resolve(path: str, work_dir: str, what: str) -> str:
    """The checkpoint file ``path`` names (a file, a work dir, or a name in ``work_dir``:
    :func:`~cadence.checkpoint.resolve_checkpoint`)."""
    from ..checkpoint.pointer import resolve_checkpoint

    try:
        return resolve_checkpoint(path, work_dir)
    except FileNotFoundError as exc:  # a folder without a pointer
        raise CliError(f"{what} {path}: no such checkpoint file ({exc.strerror})") from exc
    except OSError as exc:  # unreachable storage, bad credentials...
        raise CliError(f"{what} {path}: cannot be read ({type(exc).__name__}: {exc})") from exc


def _trained_in(cfg: Config, args: argparse.Namespace) -> str:
    return str(getattr(args, "trained_in", None) or cfg.get("work_dir"))


def _require_checkpoint(cfg: Config, args: argparse.Namespace) -> None:
    """Stop before any work when the checkpoint named on the command line (``val``/
    ``test``'s CHECKPOINT, ``train --resume PATH``; resolved into ``load_from``) does
    not exist, local or URL."""
    if args.mode == "train":
        named = args.resume not in (None, "auto")
        path, what = (cfg.load_from, "--resume") if named else (None, "")
    else:
        path, what = cfg.load_from, "CHECKPOINT"
    if path is None:
        return
    from ..fileio import is_url, isfile

    try:
        found = isfile(path, cfg.get("backend_args")) if is_url(path) else os.path.isfile(path)
    except Exception as exc:  # noqa: BLE001 - unreachable storage, bad credentials...
        raise CliError(f"{what} {path}: cannot be read ({type(exc).__name__}: {exc})") from exc
    if not found:
        looked = "" if is_url(path) or os.path.isabs(path) else (
            f" (nor in the work dir {_trained_in(cfg, args)})")  # fmt: skip
        raise CliError(f"{what} {path}: no such checkpoint file{looked}")


def _run(args: argparse.Namespace) -> int:
    if getattr(args, "verbose", False):  # read by the runner's console; torchrun passes it on
        from ..logging.console import VERBOSE_ENV

        os.environ[VERBOSE_ENV] = "1"
    if args.nproc is not None and args.nproc > 1 and not inside_launched_process():
        # config errors are reported here, once, not by every child
        cfg = build_config(args)
        _refuse_config_errors(cfg, args.config)
        _require_checkpoint(cfg, args)
        return relaunch(args.nproc, args.argv)
    if args.nproc is not None and inside_launched_process() and args.launcher is None:
        args.launcher = "pytorch"
    cfg = build_config(args)
    _refuse_config_errors(cfg, args.config)
    _require_checkpoint(cfg, args)
    from ..registry import RUNNERS
    from ..runner import Runner

    runner = RUNNERS.build(cfg) if cfg.get("runner_type") else Runner.from_cfg(cfg)
    if args.mode == "train":
        runner.train()
        if runner.preempted is not None:  # saved, not finished: a scheduler must know
            return runner.preempted.exit_code
    else:
        metrics = runner.val() if args.mode == "val" else runner.test()
        if runner.rank == 0:
            print({k: float(v) if hasattr(v, "__float__") else v for k, v in metrics.items()})
    # The runner releases its process group itself: without a barrier if a call raised,
    # at exit otherwise (see cadence/runner/lifecycle.py).
    return 0
