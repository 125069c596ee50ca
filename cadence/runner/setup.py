"""What a run logs and saves when it starts (detectron2's ``default_setup``).

After the strategy has set up processes, seeds and cuDNN flags, the runner
calls :func:`default_setup`. The console gets three short lines (versions;
device, strategy and world size; seed and where the full config is saved);
the log file also keeps the full record:

* this process's rank, local rank, world size and device,
* the environment (Python, platform, torch, CUDA, cadence, git hash),
* the command line (``sys.argv``),
* the seed (and this rank's seed with ``randomness.diff_rank_seed``), the
  deterministic and cuDNN benchmark flags in effect (``env_cfg.cudnn_benchmark``),
* the content of the config file as written (syntax-highlighted where the log
  goes to a terminal, plain text in log files and pipes),
* the full resolved config, which rank 0 also saves into the work dir as
  ``<config stem>.py``,

and :func:`save_hook_table` writes the hook table to ``<log dir>/hooks.txt``.
Those details reach the console too when the run is verbose
(:func:`cadence.logging.console.is_verbose`).
"""

from __future__ import annotations

import io
import logging
import os
import shlex
import sys
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import torch

from ..hooks.run_summary import short_path
from ..logging.console import DETAIL, tidy_console
from .env_info import collect_env, format_env

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def _is_terminal(handler: logging.Handler) -> bool:
    stream = getattr(handler, "stream", None)
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (ValueError, OSError):  # closed stream
        return False


def highlight_python(text: str) -> str:
    """``text`` with ANSI colours for Python syntax (rich), or unchanged if rich fails."""
    try:
        from rich.console import Console
        from rich.syntax import Syntax
    except ImportError:  # pragma: no cover - rich is a dependency
        return text
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="256", width=10_000)
    console.print(Syntax(text, "python", theme="ansi_dark", background_color="default"), end="")
    return buffer.getvalue().rstrip("\n") + ("\n" if text.endswith("\n") else "")


def _handlers(logger: logging.Logger) -> list[logging.Handler]:
    """The handlers a record of ``logger`` reaches (its own, then its ancestors')."""
    found: list[logging.Handler] = []
    current: logging.Logger | None = logger
    while current is not None:
        found.extend(current.handlers)
        current = current.parent if current.propagate else None
    return found


def log_code(
    logger: logging.Logger, header: str, code: str, extra: Mapping[str, Any] | None = None
) -> None:
    """Log ``header`` and Python ``code``: highlighted for terminal handlers, plain elsewhere
    (``extra`` as for ``logger.info``)."""
    if not logger.isEnabledFor(logging.INFO):
        return
    extra = dict(extra or {})
    plain = logger.makeRecord(
        logger.name, logging.INFO, __file__, 0, f"{header}\n{code}", (), None, extra=extra
    )
    colored: logging.LogRecord | None = None
    for handler in _handlers(logger):
        if logging.INFO < handler.level:
            continue
        record = plain
        if _is_terminal(handler):
            if colored is None:
                colored = logger.makeRecord(
                    logger.name, logging.INFO, __file__, 0,
                    f"{header}\n{highlight_python(code)}", (), None, extra=extra,
                )  # fmt: skip
            record = colored
        handler.handle(record)


def _seed_line(runner: RunnerProtocol) -> str:
    randomness = dict(runner.randomness_cfg or {})
    seed = runner.seed
    line = f"Seed: {seed}"
    if randomness.get("diff_rank_seed") and seed is not None:
        line += f" (rank {runner.rank} uses {seed + runner.rank}: diff_rank_seed)"
    line += (
        f"    deterministic: {bool(randomness.get('deterministic', False))}"
        f"    cudnn_benchmark: {bool(torch.backends.cudnn.benchmark)}"
    )
    return line


def config_file_text(cfg: Any) -> tuple[str, str] | None:
    """``(path, content)`` of the file ``cfg`` was loaded from, or None."""
    path = getattr(cfg, "filename", None)
    if not path or not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as file:
        return path, file.read()


def default_setup(runner: RunnerProtocol) -> str:
    """Log how this run starts and save its resolved config; return the config's text.

    ``runner`` must have its logger and strategy set up. The config reaches the
    visualizer later, after a resume (``Runner.load_or_resume``).
    """
    logger = runner.logger
    tidy_console(logger)
    strategy = runner.strategy
    env = collect_env(os.getcwd())
    git = f", git {env['git']}" if env.get("git") else ""
    logger.info(
        f"cadence {env['cadence']}, PyTorch {env['PyTorch']}, Python {sys.version.split()[0]}{git}"
    )
    logger.info(
        f"{type(strategy).__name__} on {strategy.device}, world size {runner.world_size}"
        + (f" (this is rank {runner.rank})" if runner.world_size > 1 else "")
    )
    logger.info(
        f"Rank {runner.rank} of world size {runner.world_size} "
        f"(local rank {getattr(strategy, 'local_rank', 0)}), device {strategy.device}, "
        f"strategy {type(strategy).__name__}, experiment {runner.experiment_name}",
        extra=DETAIL,
    )
    logger.info("Environment:\n" + format_env(env), extra=DETAIL)
    logger.info("Command line: " + shlex.join(sys.argv), extra=DETAIL)
    logger.info(_seed_line(runner))
    cfg = runner.cfg
    if not len(cfg):
        return ""
    source = config_file_text(cfg)
    if source is not None:
        log_code(logger, f"Config file {source[0]}:", source[1], extra=DETAIL)
    text = str(cfg.pretty_text)
    log_code(logger, "Config:", text, extra=DETAIL)
    if runner.rank == 0:  # a config without a file: <timestamp>.py, as mmengine
        stem = os.path.splitext(os.path.basename(cfg.filename or runner.timestamp))[0]
        path = os.path.join(runner.work_dir, f"{stem}.py")
        cfg.dump(path)
        logger.info(f"Full config saved to {short_path(path)}")
    return text


def save_hook_table(runner: RunnerProtocol, table: str) -> None:
    """Write the hook table to ``<log dir>/hooks.txt`` (rank 0) and log it as a detail."""
    if runner.rank == 0:
        path = os.path.join(runner.log_dir, "hooks.txt")
        with open(path, "w", encoding="utf-8") as file:
            file.write(table + "\n")
    runner.logger.info("Hooks:\n" + table, extra=DETAIL)


def sync_timestamp(world_size: int, work_dir: str | None = None) -> str:
    """This run's start time as ``YYYYmmdd_HHMMSS``, rank 0's on every rank; with a
    ``_2``, ``_3``... suffix when a run of the same second already has that log folder
    in ``work_dir`` (runs never share log files)."""
    stamp = base = time.strftime("%Y%m%d_%H%M%S", time.localtime())
    count = 1
    while work_dir is not None and os.path.exists(os.path.join(work_dir, stamp)):
        count += 1
        stamp = f"{base}_{count}"
    if world_size > 1:
        from ..dist import broadcast_object_list

        box = [stamp]
        broadcast_object_list(box, src=0)
        stamp = box[0]
    return stamp


def build_visualizer(cfg: Any, name: str | None, log_dir: str) -> Any:
    """The ``visualizer`` of the config (a built one as is); backends write under ``log_dir``."""
    from ..registry import VISUALIZERS

    if cfg is not None and not isinstance(cfg, Mapping):
        if callable(getattr(cfg, "add_scalars", None)):
            return cfg
        raise TypeError(
            f"visualizer should be a Visualizer, a config dict or None, got {type(cfg).__name__}"
        )
    cfg = dict(cfg or {})
    cfg.setdefault("type", "Visualizer")
    cfg.setdefault("vis_backends", [dict(type="LocalVisBackend")])
    cfg.setdefault("name", name)
    cfg.setdefault("save_dir", log_dir)  # backends write to <save_dir>/vis_data
    return VISUALIZERS.build(cfg, key_path="visualizer")


def warn_misspelled_keys(keys: Any, known: tuple[str, ...]) -> None:
    """Warn for each of ``keys`` that is not in ``known`` but close to one of them."""
    import difflib
    import warnings

    for key in keys:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.85)
            if close:
                warnings.warn(
                    f"config key '{key}' is not read by the runner; did you mean '{close[0]}'?",
                    stacklevel=3,
                )


__all__ = [
    "build_visualizer", "config_file_text", "default_setup", "highlight_python", "log_code",
    "save_hook_table", "sync_timestamp", "warn_misspelled_keys",
]  # fmt: skip
