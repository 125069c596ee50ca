"""The runner as hooks, loops, the log processor, metrics and setup code see it.

:class:`RunnerProtocol` lists the members of a runner that code outside
``cadence.runner`` may use. It lives here, low in the layer order, so that its users
(which sit below the runner package) can import it; the parts it hands out are typed by
the narrow views of :mod:`.parts` instead of their classes, and this module imports
nothing above ``cadence.config``. :class:`~cadence.runner.Runner` satisfies it;
``cadence/runner/protocol.py`` makes mypy check that.

The members describe a runner during a run: ``logger``, ``message_hub``,
``visualizer``, ``log_processor`` exist once the run is set up, and
``optim_wrapper``/``param_schedulers`` once training is prepared.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from .parts import (
    LoopView,
    MessageHubView,
    OptimWrapperView,
    RunPathsView,
    StrategyView,
    VisualizerView,
)

if TYPE_CHECKING:
    from torch import nn
    from torch.utils.data import DataLoader

    from ..config.config import Config
    from ..resilience.heartbeat import Heartbeat


class LogProcessorView(Protocol):
    """Turns the message hub's values into log lines (``(tag, log_str)``)."""

    def get_log_after_iter(
        self, runner: RunnerProtocol, batch_idx: int, mode: str
    ) -> tuple[dict[str, Any], str]:
        """The tag and line after iteration ``batch_idx`` of ``mode``."""

    def get_log_after_epoch(
        self, runner: RunnerProtocol, batch_idx: int, mode: str, with_non_scalar: bool = False
    ) -> tuple[dict[str, Any], str]:
        """The tag and line after an epoch (a validation or test run) of ``mode``."""


class RunnerProtocol(Protocol):
    """The members of a runner that code outside ``cadence.runner`` may use."""

    # ------------------------------------------------------------ the run's parts
    @property
    def cfg(self) -> Config:
        """The whole config the run was built from."""

    @property
    def model(self) -> nn.Module:
        """The model as prepared by the strategy (possibly wrapped, e.g. by DDP)."""

    @property
    def strategy(self) -> StrategyView:
        """Places, wraps and checkpoints the model; knows ranks and devices."""

    @property
    def optim_wrapper(self) -> OptimWrapperView:
        """The optimizer wrapper (an ``OptimWrapperDict`` for several optimizers)."""

    @property
    def param_schedulers(self) -> list[Any] | dict[str, list[Any]] | None:
        """Parameter schedulers: a list, a dict of lists per optimizer, or None."""

    @property
    def logger(self) -> logging.Logger:
        """The run's logger."""

    @property
    def message_hub(self) -> MessageHubView:
        """The run's message hub (logged scalars and runtime info)."""

    @property
    def visualizer(self) -> VisualizerView:
        """The run's visualizer (scalars, images, config)."""

    @property
    def log_processor(self) -> LogProcessorView:
        """Formats the message hub's values into log lines."""

    @property
    def randomness_cfg(self) -> Mapping[str, Any]:
        """The ``randomness`` config (``seed``, ``diff_rank_seed``, ``deterministic``)."""

    @property
    def stage_calls(self) -> Mapping[str, tuple[Callable[..., Any], ...]]:
        """Per stage, the hook functions in call order, each ``fn(runner, *args)`` with the
        stage's arguments by position; what :meth:`call_hook` runs, and what a loop runs
        itself per iteration (reporting an error with :meth:`blame_hook`)."""

    # ------------------------------------------------------------------ loops
    @property
    def compiled(self) -> bool:
        """Whether the model is compiled (``compile=`` of the config)."""

    @property
    def train_loop(self) -> LoopView:
        """The training loop (built on first use; raises when the config cannot train)."""

    @property
    def train_loop_or_none(self) -> LoopView | None:
        """The training loop if it is built, else None (never builds it)."""

    @property
    def val_loop(self) -> LoopView | None:
        """The validation loop, or None when the config sets no validation."""

    @property
    def test_loop(self) -> LoopView | None:
        """The test loop, or None when the config sets no testing."""

    @property
    def train_dataloader(self) -> DataLoader[Any]:
        """The training loop's dataloader."""

    @property
    def train_loop_by_epoch(self) -> bool:
        """Whether training counts in epochs (True when there is no training loop)."""

    # --------------------------------------------------------------- position
    @property
    def epoch(self) -> int:
        """Epochs finished by the training loop (0 without one)."""

    @property
    def iter(self) -> int:
        """Iterations finished by the training loop (0 without one)."""

    @property
    def max_epochs(self) -> int:
        """Epochs the training loop runs (0 without one)."""

    @property
    def max_iters(self) -> int:
        """Iterations the training loop runs (0 without one)."""

    @property
    def resuming(self) -> bool | str:
        """The ``resume`` setting: True, a checkpoint path, or False."""

    @property
    def heartbeat(self) -> Heartbeat:
        """What the loops bump at each step boundary (read by the hang watchdog)."""

    # ------------------------------------------------------- places and names
    @property
    def work_dir(self) -> str:
        """Absolute path of the work dir (checkpoints, saved config); for a URL work dir,
        the local folder that stages it (``paths.remote_work_dir`` is the URL)."""

    @property
    def paths(self) -> RunPathsView:
        """Where the run's files live, and the storage that uploads staged ones."""

    @property
    def log_dir(self) -> str:
        """This run's log folder inside the work dir."""

    @property
    def experiment_name(self) -> str | None:
        """The experiment's name (the config's stem and timestamp by default)."""

    @property
    def timestamp(self) -> str:
        """When this run was built, ``YYYYmmdd_HHMMSS`` (rank 0's on every rank)."""

    # ---------------------------------------------------------- distribution
    @property
    def rank(self) -> int:
        """This process's global rank."""

    @property
    def world_size(self) -> int:
        """Number of processes of the run."""

    @property
    def seed(self) -> int | None:
        """The run's random seed (the same on every rank)."""

    # ---------------------------------------------------------------- methods
    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        """Call stage ``fn_name`` on every hook that implements it."""

    def blame_hook(self, exc: BaseException, fn_name: str, fn: Any) -> None:
        """Note on ``exc`` the hook whose function ``fn`` (from :attr:`stage_calls`) raised it."""

    def save_checkpoint(
        self,
        out_dir: str,
        filename: str,
        file_client_args: Any = None,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        meta: Mapping[str, Any] | None = None,
        by_epoch: bool = True,
        backend_args: Any = None,
        update_last: bool = True,
        async_: bool = False,
        delete_after: Sequence[str] = (),
        pointers: Sequence[str] = (),
    ) -> str:
        """Write a checkpoint of the whole run to ``out_dir/filename``; return its path."""

    def wait_for_checkpoint(self) -> None:
        """Wait for a background checkpoint write to finish; raise its error, if any."""

    def after_validation(self) -> None:
        """Called by the training loop once a validation during training has finished:
        the checkpoints taken just before it record that it ran."""


@runtime_checkable
class RunnerClass(Protocol):
    """A runner class as ``RUNNERS.build`` (``runner_type=...``) sees it: built from a config."""

    def from_cfg(self, cfg: Config | Mapping[str, Any]) -> RunnerProtocol:
        """Build a runner from a whole config (a classmethod on the class)."""


__all__ = ["LogProcessorView", "RunnerClass", "RunnerProtocol"]
