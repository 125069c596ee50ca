"""Narrow views of the parts a runner hands to hooks, loops and the log processor.

Each view lists the members that code below the runner uses of a part whose class lives
above it (or beside it, where importing the class would close a cycle). The concrete
classes satisfy them structurally: :class:`~cadence.loops.BaseLoop`,
:class:`~cadence.logging.MessageHub`, :class:`~cadence.visualization.Visualizer`,
:class:`~cadence.optim.OptimWrapper`,
:class:`~cadence.strategies.BaseStrategy` and :class:`~cadence.runner.paths.RunPaths`;
``cadence/runner/protocol.py`` makes mypy check each of them. :class:`Trained` is the
one concrete class here: the model, optimizer wrapper and schedulers as the runner holds
them and hands them to the strategy, which acts on them and keeps none.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import torch
    from torch import nn


class LoopView(Protocol):
    """A train, validation or test loop: its data, and saving/restoring its position."""

    dataloader: Any
    #: ``train_cfg.resume_policy`` of a training loop (``'keep'`` elsewhere)
    resume_policy: str

    def run(self) -> Any:
        """Run the loop."""

    def state_dict(self) -> dict[str, Any]:
        """The loop's position, enough to continue exactly where it stopped."""

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from a position returned by :meth:`state_dict`."""


class MessageHubView(Protocol):
    """The run's message hub: logged scalars (with their history) and runtime info."""

    def update_scalar(self, key: str, value: Any, count: int = 1, resumed: bool = True) -> None:
        """Append ``value`` to the history of scalar ``key``."""

    def update_scalars(self, log_dict: dict[str, Any], resumed: bool = True) -> None:
        """:meth:`update_scalar` for each item of ``log_dict``."""

    def get_scalar(self, key: str) -> Any:
        """The history buffer of scalar ``key``."""

    @property
    def log_scalars(self) -> OrderedDict[str, Any]:
        """Every scalar's history buffer, by key."""

    def update_info(self, key: str, value: Any, resumed: bool = True) -> None:
        """Set runtime info ``key``."""

    def update_info_dict(self, info_dict: dict[str, Any], resumed: bool = True) -> None:
        """:meth:`update_info` for each item of ``info_dict``."""

    def scalar_writer(self, key: str, resumed: bool = True) -> Callable[[Any], None]:
        """A function appending its argument to the history of scalar ``key``."""

    def get_info(self, key: str, default: Any = None) -> Any:
        """Runtime info ``key`` (``default`` when unset)."""

    def pop_info(self, key: str, default: Any = None) -> Any:
        """Remove runtime info ``key`` and return it (``default`` when unset)."""

    @property
    def runtime_info(self) -> OrderedDict[str, Any]:
        """Every runtime info value, by key."""


class VisualizerView(Protocol):
    """The run's visualizer, as hooks write to it."""

    def add_config(self, config: Any, **kwargs: Any) -> None:
        """Record the run's config with every backend."""

    def add_image(self, name: str, image: Any, step: int = 0) -> None:
        """Record an image."""

    def add_graph(self, model: Any, data_batch: Any = None, **kwargs: Any) -> None:
        """Record the model graph."""

    def add_datasample(
        self,
        name: str,
        image: Any,
        data_sample: Any = None,
        draw_gt: bool = True,
        draw_pred: bool = True,
        show: bool = False,
        wait_time: float = 0,
        step: int = 0,
    ) -> None:
        """Draw a data sample on its image and record it."""

    def add_scalar(self, name: str, value: Any, step: int = 0, **kwargs: Any) -> None:
        """Record one scalar."""

    def add_scalars(
        self,
        scalar_dict: dict[str, Any],
        step: int = 0,
        file_path: str | None = None,
        **kwargs: Any,
    ) -> None:
        """Record several scalars at one step."""

    def close(self) -> None:
        """Close every backend."""


class OptimWrapperView(Protocol):
    """The optimizer wrapper (or a dict of them) that trains the model."""

    @property
    def param_groups(self) -> list[dict[str, Any]]:
        """The optimizer's parameter groups."""

    def get_lr(self) -> dict[str, list[float]]:
        """The learning rates, by name (``lr``, or ``<name>.lr`` for a dict of wrappers)."""

    def get_momentum(self) -> dict[str, list[float]]:
        """The momenta, by name, like :meth:`get_lr`."""

    def pop_log_vars(self) -> dict[str, torch.Tensor]:
        """Values to log once after a step (``grad_norm`` after clipping by norm)."""

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's (and scaler's) state."""

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore a state returned by :meth:`state_dict`."""


#: Parameter schedulers: one list, or a list per name of an ``OptimWrapperDict``.
Schedulers = list[Any] | dict[str, list[Any]]


@dataclass
class Trained:
    """What a run trains: the model as the strategy set it up, its optimizer wrapper and
    parameter schedulers (each None until built, or without training).

    The runner builds and owns them (``runner.trained``); a strategy is handed them when
    it acts on them (wraps them, writes or restores a checkpoint of them, releases the
    process group they are tied to) and keeps none of them.
    """

    model: nn.Module | None = None
    optim_wrapper: OptimWrapperView | None = None
    param_schedulers: Schedulers | None = None

    def drop(self) -> None:
        """Forget all three (what wraps them is about to be released)."""
        self.model = self.optim_wrapper = self.param_schedulers = None

    def require_model(self) -> nn.Module:
        """The model; RuntimeError when it is not built yet."""
        if self.model is None:
            raise RuntimeError("no model yet: set it up (strategy.setup_module) first")
        return self.model


class StrategyView(Protocol):
    """The strategy that places, wraps and checkpoints the model."""

    @property
    def device(self) -> torch.device:
        """The device this process computes on."""

    @property
    def rank(self) -> int:
        """This process's global rank."""

    @property
    def world_size(self) -> int:
        """Number of processes."""

    @staticmethod
    def unwrap(model: nn.Module) -> nn.Module:
        """The user's module inside any wrapper."""

    def model_state_dict(self, model: nn.Module) -> dict[str, Any]:
        """The full state dict of ``model`` as this strategy set it up (complete on rank 0
        for sharded strategies)."""

    def restore(
        self,
        trained: Trained,
        filename: str,
        checkpoint: dict[str, Any],
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
    ) -> Any:
        """Load a checkpoint's model, optimizer and scheduler states into ``trained``."""


class StagingView(Protocol):
    """The storage that mirrors a run's staged local files to their URLs."""

    def push_file(self, path: str, source: str | None = None) -> None:
        """Upload staged file ``path`` (nothing for a plain local path)."""

    def pull_file(self, path: str) -> bool:
        """Replace staged file ``path`` by its remote copy; False when there is none."""


class RunPathsView(Protocol):
    """Where the run's files live, and staging of URL paths."""

    @property
    def work_dir(self) -> str:
        """The local work dir (the staging folder of a URL work dir)."""

    @property
    def remote_work_dir(self) -> str | None:
        """The work dir's URL, when it is remote."""

    @property
    def resumed_from(self) -> str | None:
        """The checkpoint this run resumed from, once it has."""

    @property
    def storage(self) -> StagingView:
        """Maps URLs to staged local paths and uploads them."""

    def holds(self, path: str, folder: str) -> bool:
        """Whether ``path`` lies directly in ``folder``."""

    def add_options(self, backend_args: Mapping[str, Any] | None) -> None:
        """Join ``backend_args`` to the storage options."""

    def stage(self, value: Any, backend_args: Mapping[str, Any] | None = None) -> Any:
        """``value`` with a URL replaced by its staged local path."""


__all__ = [
    "LoopView",
    "MessageHubView",
    "OptimWrapperView",
    "RunPathsView",
    "StagingView",
    "Schedulers",
    "StrategyView",
    "Trained",
    "VisualizerView",
]
