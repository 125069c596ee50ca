"""The run's name and reporting: timestamp, experiment name, logger, message hub,
visualizer and log processor.

As in mmengine, a runner builds these when it is constructed, so that code holding
the runner (a training script, a hook registered later) can use them at once. Nothing
is written then: rank 0's log records are held until the run starts
(:meth:`RunEnvironment.agree_on_start`), and the log file begins with them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..logging.logger import hold_records
from .processes import launch_rank
from .setup import build_visualizer, sync_timestamp

if TYPE_CHECKING:
    from ..config import Config
    from ..hooks.log_processor import LogProcessor
    from ..logging import MessageHub, MMLogger
    from ..registry import DefaultScope
    from ..visualization import Visualizer
    from .paths import RunPaths
    from .settings import RunSettings


class RunEnvironment:
    """What a run reports through, and the name it reports under.

    ``experiment_name`` is the configured one, else the config file's stem and the
    timestamp, else the timestamp; ``log_dir`` is ``<work_dir>/<timestamp>``.
    """

    def __init__(
        self, paths: RunPaths, cfg: Config, settings: RunSettings, experiment_name: str | None
    ) -> None:
        from ..registry import set_default_scope

        self.paths = paths
        self.settings = settings
        #: the config file's name without its extension ('' for a config without a file)
        self._stem = os.path.splitext(os.path.basename(cfg.filename or ""))[0]
        rank = launch_rank(settings.launcher)
        # Rank 0 picks a log folder no earlier run of the work dir has; the others
        # take rank 0's once the process group exists.
        self.timestamp = sync_timestamp(1, paths.work_dir if rank == 0 else None)
        self._named = experiment_name is not None
        self.experiment_name: str | None = experiment_name
        self._name_experiment()
        if settings.default_scope is not None:
            set_default_scope(settings.default_scope)
        from ..logging import get_logger

        self.logger: MMLogger = get_logger(
            self.experiment_name or "cadence",
            log_level=self.settings.log_level,
            distributed_rank=rank,
        )
        if rank == 0:  # kept until the run holds its work dir and opens the log file
            hold_records(self.logger)
        self.message_hub: MessageHub = self.build_message_hub()
        self.visualizer: Visualizer = self.build_visualizer(settings.visualizer)
        self.log_processor: LogProcessor = self.build_log_processor(settings.log_processor)

    @property
    def default_scope(self) -> DefaultScope | None:
        """A :class:`~cadence.registry.DefaultScope` handle on the configured
        ``default_scope`` (None when the runner sets none)."""
        from ..registry import DefaultScope

        name = self.settings.default_scope
        return None if name is None else DefaultScope(self.experiment_name or "runner", name)

    @property
    def log_dir(self) -> str:
        """``<work_dir>/<timestamp>``: this run's log file and visualizer data."""
        return os.path.join(self.paths.work_dir, self.timestamp)

    def _name_experiment(self) -> None:
        if self._named:
            return
        stem = self._stem
        self.experiment_name = f"{stem}_{self.timestamp}" if stem else self.timestamp

    def agree_on_start(self, rank: int, world_size: int) -> None:
        """Once the process group exists: every rank takes rank 0's timestamp (and the
        experiment name made from it), creates the log folder and logs to its file."""
        if world_size > 1:
            from ..dist import broadcast_object_list

            box = [self.timestamp]
            broadcast_object_list(box, src=0)
            if box[0] != self.timestamp:
                self.timestamp = box[0]
                self._name_experiment()
        os.makedirs(self.log_dir, exist_ok=True)
        self.logger = self.build_logger(
            log_level=self.settings.log_level, name=self.logger.name, distributed_rank=rank
        )

    # ------------------------------------------------- mmengine's builders
    def build_logger(
        self, log_level: int | str = "INFO", log_file: str | None = None, **kwargs: Any
    ) -> MMLogger:
        """The run's logger, named after the experiment, writing to ``log_file``
        (default ``<log_dir>/<timestamp>.log``, opened for appending). ``kwargs`` go to
        :func:`cadence.logging.get_logger` (``name``, ``distributed_rank``, ``rank_files``...)."""
        from ..logging import get_logger

        if log_file is None:
            log_file = os.path.join(self.log_dir, f"{self.timestamp}.log")
        name = kwargs.pop("name", None) or self.experiment_name or "cadence"
        kwargs.setdefault("file_mode", "a")
        return get_logger(name, log_file=log_file, log_level=log_level, **kwargs)

    def build_message_hub(self, message_hub: Mapping[str, Any] | None = None) -> MessageHub:
        """The message hub named after the experiment (``message_hub`` may set ``name``
        and the hub's other arguments)."""
        from ..logging import MessageHub

        if message_hub is not None and not isinstance(message_hub, Mapping):
            raise TypeError(
                f"message_hub should be a dict or None, got {type(message_hub).__name__}"
            )
        cfg = dict(message_hub or {})
        cfg.setdefault("name", self.experiment_name or "cadence")
        return MessageHub.get_instance(**cfg)

    def build_visualizer(self, visualizer: Any = None) -> Visualizer:
        """The visualizer of ``visualizer`` (a config dict, a built one, or None for a
        ``Visualizer`` with a ``LocalVisBackend``), named after the experiment and
        writing under :attr:`log_dir`."""
        built: Visualizer = build_visualizer(visualizer, self.experiment_name, self.log_dir)
        return built

    def build_log_processor(self, log_processor: Any) -> LogProcessor:
        """A log processor from its config (``type`` defaults to ``LogProcessor``); a
        built one is returned as is."""
        if not isinstance(log_processor, Mapping):
            if callable(getattr(log_processor, "get_log_after_iter", None)):
                return log_processor
            raise TypeError(
                "log_processor should be a LogProcessor or a config dict, got "
                f"{type(log_processor).__name__}"
            )
        from ..registry import LOG_PROCESSORS

        cfg = dict(log_processor)
        cfg.setdefault("type", "LogProcessor")
        built: LogProcessor = LOG_PROCESSORS.build(cfg, key_path="log_processor")
        return built


__all__ = ["RunEnvironment"]
