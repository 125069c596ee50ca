"""The runner's read-only facts: names, paths, process facts, position and loop parts
(mmengine's ``Runner`` properties)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .startup import launch_rank, launch_world_size

if TYPE_CHECKING:
    from ..config import Config
    from ..loops import BaseLoop


class PropertiesMixin:
    """Properties that downstream hooks and scripts read off a runner."""

    _cfg: Config
    _work_dir: str
    _timestamp: str
    _experiment_name: str | None
    _launcher: str
    _env_ready: bool
    _default_scope: str | None
    _resume: bool | str
    _model: Any
    _model_cfg: Any
    _train_loop: Any
    _auto_scale_lr: dict[str, Any]
    randomness_cfg: dict[str, Any]
    strategy: Any

    if TYPE_CHECKING:  # provided by the other parts of the runner
        # The loops are built on first use by the runner itself.
        @property
        def train_loop(self) -> BaseLoop: ...

        @property
        def val_loop(self) -> BaseLoop | None: ...

        @property
        def test_loop(self) -> BaseLoop | None: ...

    # ------------------------------------------------------------- names and paths
    @property
    def cfg(self) -> Config:
        """The config the runner was built from (empty when built from arguments)."""
        return self._cfg

    @property
    def experiment_name(self) -> str | None:
        """The run's name: ``experiment_name`` as configured, else the config file's
        stem and the timestamp, else the timestamp."""
        return self._experiment_name

    @property
    def model_name(self) -> str:
        """The model's class name (from its config's ``type`` until it is built)."""
        if self._model is not None:
            return type(self.strategy.unwrap(self._model)).__name__
        model = self._model_cfg
        if not isinstance(model, Mapping):
            return type(model).__name__
        kind = model.get("type")
        if isinstance(kind, str):
            return kind.rsplit(".", 1)[-1]
        return str(getattr(kind, "__name__", kind))

    @property
    def work_dir(self) -> str:
        return self._work_dir

    @property
    def log_dir(self) -> str:
        """``<work_dir>/<timestamp>``: this run's log file and visualizer data."""
        return os.path.join(self._work_dir, self._timestamp)

    @property
    def timestamp(self) -> str:
        """When the run was built, ``YYYYmmdd_HHMMSS`` (rank 0's once processes are set up)."""
        return self._timestamp

    # ------------------------------------------------------------------ processes
    @property
    def launcher(self) -> str:
        return self._launcher

    @property
    def rank(self) -> int:
        """This process's rank: the launcher's until the process group exists."""
        if not self._env_ready:
            return launch_rank(self._launcher)
        return int(self.strategy.rank)

    @property
    def world_size(self) -> int:
        """The number of processes: the launcher's until the process group exists."""
        if not self._env_ready:
            return launch_world_size(self._launcher)
        return int(self.strategy.world_size)

    @property
    def distributed(self) -> bool:
        """Whether the run has more than one process."""
        return self.world_size > 1

    @property
    def seed(self) -> int | None:
        """The base random seed (None until the strategy's environment is set up)."""
        seed: int | None = self.strategy.seed
        return seed

    @property
    def deterministic(self) -> bool:
        """Whether ``randomness.deterministic`` asks for deterministic algorithms."""
        return bool(self.randomness_cfg.get("deterministic", False))

    @property
    def resuming(self) -> bool | str:
        """The ``resume`` setting: True, ``'auto'``, a checkpoint path, or False (while a
        checkpoint loads: True when the run resumes, False when it loads weights)."""
        return self._resume

    @property
    def default_scope(self) -> Any:
        """A :class:`~cadence.registry.DefaultScope` handle on the configured
        ``default_scope`` (None when the runner sets none)."""
        from ..registry import DefaultScope

        name = self._default_scope
        return None if name is None else DefaultScope(self._experiment_name or "runner", name)

    @property
    def auto_scale_lr(self) -> dict[str, Any]:
        """The ``auto_scale_lr`` config (empty when not set)."""
        return self._auto_scale_lr

    # ------------------------------------------------------------------- position
    @property
    def train_loop_or_none(self) -> BaseLoop | None:
        """The training loop if it is built, else None (never builds it)."""
        loop: BaseLoop | None = self._train_loop
        return loop

    @property
    def train_loop_by_epoch(self) -> bool:
        """Whether training counts in epochs (True when there is no training loop)."""
        loop = self._train_loop
        return True if loop is None else bool(getattr(loop, "by_epoch", True))

    @property
    def epoch(self) -> int:
        return self._train_loop.epoch if self._train_loop is not None else 0

    @property
    def iter(self) -> int:
        return self._train_loop.iter if self._train_loop is not None else 0

    @property
    def max_epochs(self) -> int:
        return self._train_loop.max_epochs if self._train_loop is not None else 0

    @property
    def max_iters(self) -> int:
        return self._train_loop.max_iters if self._train_loop is not None else 0

    @property
    def val_interval(self) -> int:
        """How often training validates (builds the training loop)."""
        return int(getattr(self.train_loop, "val_interval", 1))

    @property
    def val_begin(self) -> int:
        """The epoch or iteration from which training validates (builds the training loop)."""
        return int(getattr(self.train_loop, "val_begin", 1))

    # ------------------------------------------------------------------ loop parts
    @property
    def train_dataloader(self) -> Any:
        return self.train_loop.dataloader

    @property
    def val_dataloader(self) -> Any:
        return self.val_loop.dataloader if self.val_loop is not None else None

    @property
    def test_dataloader(self) -> Any:
        return self.test_loop.dataloader if self.test_loop is not None else None

    @property
    def val_evaluator(self) -> Any:
        """The validation loop's evaluator (None without validation)."""
        return getattr(self.val_loop, "evaluator", None)

    @property
    def test_evaluator(self) -> Any:
        """The test loop's evaluator (None without testing)."""
        return getattr(self.test_loop, "evaluator", None)


__all__ = ["PropertiesMixin"]
