"""The runner's side of the hang watchdog: the ``hang_timeout`` setting and its lifetime.

``env_cfg.dist_cfg.hang_timeout`` (seconds) ends a job in which no rank made
progress for that long (:mod:`cadence.resilience.watchdog`). With several processes
it defaults to :data:`~cadence.resilience.watchdog.DEFAULT_HANG_TIMEOUT` (600 s); one
process is watched only when the config sets it; 0 turns it off. The watchdog
runs while a loop runs (``train()``, ``val()``, ``test()``), and stops before the
runner goes on, so that no thread outlives the loop.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from .progress_board import ProgressBoard, open_board
from .watchdog import DEFAULT_HANG_TIMEOUT, HangWatchdog

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

SETTING = "env_cfg.dist_cfg.hang_timeout"


def hang_timeout_from(env_cfg: Mapping[str, Any]) -> float | None:
    """The configured ``env_cfg.dist_cfg.hang_timeout`` in seconds, ``None`` when unset.

    Raises ``ValueError`` naming the key for anything but a number >= 0.
    """
    dist_cfg = env_cfg.get("dist_cfg") or {}
    value = dist_cfg.get("hang_timeout") if isinstance(dist_cfg, Mapping) else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise ValueError(
            f"{SETTING} must be a number of seconds >= 0 (0 turns the hang watchdog off), "
            f"got {value!r}"
        )
    return float(value)


def effective_hang_timeout(configured: float | None, world_size: int) -> float:
    """Seconds the watchdog waits: the configured value, else the default with several
    processes and 0 (off) for one."""
    if configured is None:
        return DEFAULT_HANG_TIMEOUT if world_size > 1 else 0.0
    return configured


@contextlib.contextmanager
def watching_for_hangs(runner: RunnerProtocol, configured: float | None) -> Iterator[None]:
    """Run the body under a hang watchdog (when one is due), stopped when the body ends."""
    timeout = effective_hang_timeout(configured, runner.world_size)
    if not timeout or math.isinf(timeout):
        yield
        return
    rank, world_size = runner.rank, runner.world_size
    restart = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")

    def board() -> ProgressBoard:
        return open_board(
            rank, world_size, folder=os.path.join(runner.log_dir, "hang_watch"),
            namespace=f"{restart}/{runner.timestamp}", timeout=min(max(timeout / 4, 2.0), 30.0),
            logger=runner.logger,
        )  # fmt: skip

    watchdog = HangWatchdog(timeout, runner.heartbeat, board, rank=rank, world_size=world_size,
                            logger=runner.logger, setting=SETTING)  # fmt: skip
    watchdog.start()
    try:
        yield
    finally:
        watchdog.stop()


__all__ = ["SETTING", "effective_hang_timeout", "hang_timeout_from", "watching_for_hangs"]
