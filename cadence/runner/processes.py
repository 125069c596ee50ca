"""The run's processes: the strategy's environment (process group, device, seeds), set
up on first use and released again (:mod:`.lifecycle` says when).

Before the process group exists each process knows its rank from the launcher's
environment (``RANK``...); only rank 0 writes files then.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..contracts import Trained
    from ..strategies.base import BaseStrategy
    from .settings import RunSettings

#: The environment variables that give a launched process its rank and the number of
#: processes (torchrun, SLURM, Open MPI, MPICH).
_RANK_VARIABLES = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")
_SIZE_VARIABLES = ("WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE")


def _first_int(names: tuple[str, ...], default: int) -> int:
    for name in names:
        value = os.environ.get(name)
        if value is not None and value.strip().isdigit():
            return int(value)
    return default


def launch_rank(launcher: str) -> int:
    """This process's rank as its launcher set it (0 without a launcher)."""
    return 0 if launcher in (None, "none") else _first_int(_RANK_VARIABLES, 0)


def launch_world_size(launcher: str) -> int:
    """The number of processes the launcher started (1 without a launcher)."""
    return 1 if launcher in (None, "none") else _first_int(_SIZE_VARIABLES, 1)


class Processes:
    """The strategy and whether its environment is set up; the rank and world size."""

    def __init__(self, strategy: BaseStrategy, settings: RunSettings) -> None:
        self.strategy = strategy
        self.settings = settings
        #: whether the strategy's environment (process group, device, seeds) is set up
        self.ready = False
        #: whether it was ever set up (the process then releases it at exit)
        self.ever = False

    @property
    def rank(self) -> int:
        """This process's rank: the launcher's until the process group exists."""
        if not self.ready:
            return launch_rank(self.settings.launcher)
        return int(self.strategy.rank)

    @property
    def world_size(self) -> int:
        """The number of processes: the launcher's until the process group exists."""
        if not self.ready:
            return launch_world_size(self.settings.launcher)
        return int(self.strategy.world_size)

    def set_up(self) -> bool:
        """Set up the strategy's environment unless it is; True the first time ever."""
        if self.ready:
            return False
        settings = self.settings
        self.strategy.setup_env(settings.launcher, settings.randomness, settings.env_cfg)
        self.ready = True
        first, self.ever = not self.ever, True
        return first

    def reseed(self) -> None:
        """Seed again with the configured randomness (the environment is set up)."""
        from ..strategies.env import set_random_seed

        randomness, strategy = self.settings.randomness, self.strategy
        strategy._seed = set_random_seed(
            randomness.get("seed"), deterministic=bool(randomness.get("deterministic", False)),
            diff_rank_seed=bool(randomness.get("diff_rank_seed", False)),
            rank=strategy.rank, sync=strategy.sync_seed,
        )  # fmt: skip

    def release(self, trained: Trained | None = None, *, barrier: bool = True) -> bool:
        """Tear the strategy's environment down (handing it the run's objects, ``trained``,
        to drop what is tied to it); False when it was not set up."""
        if not self.ready:
            return False
        self.ready = False
        self.strategy.teardown(trained, barrier=barrier)
        return True


__all__ = ["Processes", "launch_rank", "launch_world_size"]
