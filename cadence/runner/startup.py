"""What a runner has from construction on, and its process environment.

As in mmengine, a runner builds its cheap parts when it is constructed: the
timestamp and experiment name, the log folder and logger, the message hub, the
visualizer, the log processor and the hooks, so that code holding the runner (a
training script, a hook registered later) can use them at once. What costs time or
needs the process group (the strategy's environment, the model, data and
optimizer) is still set up on first use.

Before the process group exists each process knows its rank from the launcher's
environment (``RANK``...); only rank 0 writes files then. Once the group exists
(:meth:`StartupMixin._agree_on_start`) every rank takes rank 0's timestamp.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..logging.logger import hold_records
from .setup import sync_timestamp

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


class StartupMixin:
    """Builds the runner's cheap parts at construction; sets up its environment."""

    _cfg: Any
    _work_dir: str
    _timestamp: str
    _experiment_name: str | None
    _named_experiment: bool
    _launcher: str
    _log_level: str | int
    _default_scope: str | None
    _visualizer_cfg: Any
    _log_processor_cfg: dict[str, Any]
    _default_hooks: Mapping[str, Any] | None
    _custom_hooks: Any
    _env_cfg: dict[str, Any]
    _env_ready: bool
    randomness_cfg: dict[str, Any]
    strategy: Any
    logger: Any
    message_hub: Any
    visualizer: Any
    log_processor: Any

    if TYPE_CHECKING:  # provided by the other parts of the runner

        @property
        def log_dir(self) -> str: ...

        @property
        def rank(self) -> int: ...

        @property
        def world_size(self) -> int: ...

        @property
        def timestamp(self) -> str: ...

        @property
        def work_dir(self) -> str: ...

        def _setup(self) -> None: ...

        def build_logger(
            self, log_level: int | str = "INFO", log_file: str | None = None, **kwargs: Any
        ) -> Any: ...

        def build_message_hub(self, message_hub: Mapping[str, Any] | None = None) -> Any: ...

        def build_visualizer(self, visualizer: Any = None) -> Any: ...

        def build_log_processor(self, log_processor: Any) -> Any: ...

        def register_hooks(self, default_hooks: Any = None, custom_hooks: Any = None) -> None: ...

    # ------------------------------------------------------------ construction
    def _start(self) -> None:
        """Timestamp, experiment name, log folder, logger, message hub, visualizer,
        log processor and hooks (called at the end of ``__init__``)."""
        from ..registry import set_default_scope

        rank = launch_rank(self._launcher)
        # Rank 0 picks a log folder no earlier run of the work dir has; the others
        # take rank 0's once the process group exists.
        self._timestamp = sync_timestamp(1, self._work_dir if rank == 0 else None)
        self._named_experiment = self._experiment_name is not None
        self._name_experiment()
        if self._default_scope is not None:
            set_default_scope(self._default_scope)
        # nothing is written before the run starts (a training run: holds its work dir);
        # until then rank 0's log file records are kept, and the file starts with them
        self.logger = self._configure_logger(rank, with_file=False)
        if rank == 0:
            hold_records(self.logger)
        self.message_hub = self.build_message_hub()
        self.visualizer = self.build_visualizer(self._visualizer_cfg)
        self.log_processor = self.build_log_processor(self._log_processor_cfg)
        self.register_hooks(self._default_hooks, self._custom_hooks)

    def _name_experiment(self) -> None:
        if self._named_experiment:
            return
        stem = os.path.splitext(os.path.basename(self._cfg.filename or ""))[0]
        self._experiment_name = f"{stem}_{self._timestamp}" if stem else self._timestamp

    def _configure_logger(self, rank: int, *, with_file: bool) -> Any:
        log_file = os.path.join(self.log_dir, f"{self._timestamp}.log") if with_file else None
        kwargs: dict[str, Any] = {"distributed_rank": rank}
        previous = getattr(self, "logger", None)  # unset until _start() builds it
        if previous is not None:  # configure the same logger again
            kwargs["name"] = previous.name
        if log_file is None:
            from ..logging import get_logger

            name = kwargs.pop("name", None) or self._experiment_name or "cadence"
            return get_logger(name, log_level=self._log_level, **kwargs)
        return self.build_logger(log_level=self._log_level, log_file=log_file, **kwargs)

    def _agree_on_start(self) -> None:
        """Once the process group exists: every rank takes rank 0's timestamp (and the
        experiment name made from it), creates the log folder and logs to its file."""
        if self.world_size > 1:
            from ..dist import broadcast_object_list

            box = [self._timestamp]
            broadcast_object_list(box, src=0)
            if box[0] != self._timestamp:
                self._timestamp = box[0]
                self._name_experiment()
        os.makedirs(self.log_dir, exist_ok=True)
        self.logger = self._configure_logger(self.rank, with_file=True)

    # ------------------------------------------------------------- environment
    def setup_env(self, env_cfg: Mapping[str, Any] | None = None) -> None:
        """Set up the strategy's environment (process group, device, seeds, cuDNN flags)
        now instead of at the first ``train``/``val``/``test``; ``env_cfg`` replaces the
        configured one when given."""
        if env_cfg is not None and not self._env_ready:
            from .hang_watch import hang_timeout_from

            self._env_cfg = dict(env_cfg)
            self._hang_timeout = hang_timeout_from(self._env_cfg)
        self._setup()

    def set_randomness(
        self, seed: int | None, diff_rank_seed: bool = False, deterministic: bool = False
    ) -> None:
        """Use this seed (None: draw one that all ranks share) and determinism for the run.

        Seeds at once when the environment is set up; otherwise the set-up seeds with it.
        """
        self.randomness_cfg = dict(
            seed=seed, diff_rank_seed=diff_rank_seed, deterministic=deterministic
        )
        if self._env_ready:
            from ..strategies.env import set_random_seed

            strategy = self.strategy
            strategy._seed = set_random_seed(
                seed, deterministic=deterministic, diff_rank_seed=diff_rank_seed,
                rank=strategy.rank, sync=strategy.sync_seed,
            )  # fmt: skip

    def dump_config(self) -> None:
        """Rank 0 writes the config to ``work_dir`` under its file's name (or
        ``<timestamp>.py`` for a config that has no file)."""
        if self.rank != 0:
            return
        filename = self._cfg.filename
        name = os.path.basename(filename) if filename else f"{self.timestamp}.py"
        self._cfg.dump(os.path.join(self.work_dir, name))


__all__ = ["StartupMixin", "launch_rank", "launch_world_size"]
