"""A typed stand-in for the runner, for unit tests of hooks, loops and logging.

:class:`StandInRunner` implements :class:`cadence.runner.RunnerProtocol` with
plain attributes a test sets (``runner.iter = 5``), so a hook can be driven
stage by stage without building a run. mypy checks it against the protocol
(this file is in mypy's ``files``), so the stand-in cannot offer what the real
runner does not. Tests import it as ``from runner_double import StandInRunner``
(pytest puts ``tests/`` on ``sys.path`` for ``tests/conftest.py``).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from cadence.config.config import Config
from cadence.contracts import RunnerProtocol
from cadence.hooks.hook import Hook
from cadence.hooks.log_processor import LogProcessor
from cadence.logging import MessageHub
from cadence.loops.base_loop import BaseLoop
from cadence.optim import OptimWrapper
from cadence.resilience.heartbeat import Heartbeat
from cadence.runner.paths import RunPaths
from cadence.strategies.base import BaseStrategy
from cadence.visualization import Visualizer


def _idle_optim_wrapper() -> OptimWrapper:
    """An optimizer wrapper over one parameter nobody trains (the default stand-in)."""
    return OptimWrapper(torch.optim.SGD([nn.Parameter(torch.zeros(1))], lr=0.1))


class StandInRunner:
    """A runner made of the values a test gives; what it does not give has a neutral default.

    ``train_loop=None`` (the default) is a runner that does not train: reading
    :attr:`train_loop` raises as the real runner does when it cannot train.
    Without ``strategy``, a :class:`BaseStrategy` on the CPU holds ``model``.
    Hook calls and saved checkpoints are recorded in :attr:`hook_calls` and
    :attr:`saved`; nothing is written to disk.
    """

    def __init__(
        self,
        *,
        model: nn.Module | None = None,
        strategy: BaseStrategy | None = None,
        optim_wrapper: OptimWrapper | None = None,
        param_schedulers: list[Any] | dict[str, list[Any]] | None = None,
        train_loop: BaseLoop | None = None,
        val_loop: BaseLoop | None = None,
        test_loop: BaseLoop | None = None,
        train_dataloader: DataLoader[Any] | None = None,
        train_loop_by_epoch: bool = True,
        epoch: int = 0,
        iter: int = 0,
        max_epochs: int = 0,
        max_iters: int = 0,
        message_hub: MessageHub | None = None,
        logger: logging.Logger | None = None,
        visualizer: Visualizer | None = None,
        log_processor: LogProcessor | None = None,
        cfg: Config | None = None,
        randomness_cfg: Mapping[str, Any] | None = None,
        resuming: bool | str = False,
        work_dir: str = "",
        experiment_name: str | None = "stand_in",
        rank: int = 0,
        world_size: int = 1,
        seed: int | None = None,
    ) -> None:
        self.model: nn.Module = model if model is not None else nn.Identity()
        if strategy is None:
            strategy = BaseStrategy(device="cpu")
        self.strategy: BaseStrategy = strategy
        self.optim_wrapper: OptimWrapper = (
            optim_wrapper if optim_wrapper is not None else _idle_optim_wrapper()
        )
        self.param_schedulers = param_schedulers
        self.train_loop_or_none: BaseLoop | None = train_loop
        self.val_loop: BaseLoop | None = val_loop
        self.test_loop: BaseLoop | None = test_loop
        self._train_dataloader = train_dataloader
        self.train_loop_by_epoch = train_loop_by_epoch
        self.epoch, self.iter = epoch, iter
        self.max_epochs, self.max_iters = max_epochs, max_iters
        self.message_hub: MessageHub = (
            message_hub if message_hub is not None else MessageHub("stand_in")
        )
        self.logger: logging.Logger = (
            logger if logger is not None else logging.getLogger("cadence.stand_in")
        )
        self.visualizer: Visualizer = (
            visualizer if visualizer is not None else Visualizer("stand_in")
        )
        self.log_processor: LogProcessor = (
            log_processor if log_processor is not None else LogProcessor()
        )
        self.cfg: Config = cfg if cfg is not None else Config()
        self.randomness_cfg: Mapping[str, Any] = dict(randomness_cfg or {})
        self.resuming = resuming
        self.heartbeat = Heartbeat()
        self.work_dir = work_dir
        self.paths = RunPaths(work_dir or ".", None, False)
        self.experiment_name = experiment_name
        self.timestamp = "20260101_000000"
        self.rank, self.world_size, self.seed = rank, world_size, seed
        self.compiled = False
        #: No hook functions at any stage (loops find every stage here, as on a runner).
        self.stage_calls: Mapping[str, tuple[Callable[..., Any], ...]] = {
            stage: () for stage in Hook.stages
        }
        #: ``(stage, kwargs)`` of every :meth:`call_hook`, in order.
        self.hook_calls: list[tuple[str, dict[str, Any]]] = []
        #: Paths :meth:`save_checkpoint` was asked to write.
        self.saved: list[str] = []

    @property
    def train_loop(self) -> BaseLoop:
        """The training loop given; raises when none was (a runner that cannot train)."""
        if self.train_loop_or_none is None:
            raise RuntimeError("this stand-in runner has no training loop")
        return self.train_loop_or_none

    @property
    def train_dataloader(self) -> DataLoader[Any]:
        """The dataloader given, else the training loop's."""
        if self._train_dataloader is not None:
            return self._train_dataloader
        return self.train_loop.dataloader

    @property
    def log_dir(self) -> str:
        return os.path.join(self.work_dir, "logs")

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        self.hook_calls.append((fn_name, kwargs))

    def blame_hook(self, exc: BaseException, fn_name: str, fn: Any) -> None:
        pass

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
        path = os.path.join(out_dir, filename)
        self.saved.append(path)
        return path

    def wait_for_checkpoint(self) -> None:
        pass

    def after_validation(self) -> None:
        pass


def _stand_in_satisfies_protocol(runner: StandInRunner) -> RunnerProtocol:
    """Never called: mypy fails here when the stand-in drifts from the protocol."""
    return runner
