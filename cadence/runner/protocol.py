"""The runner's interface (``cadence.runner.protocol.RunnerProtocol``), and mypy's check
that the real classes satisfy it.

The interface itself lives in :mod:`cadence.contracts`, below every package that uses
it; this module re-exports it under its old path and holds the checks, which need the
concrete classes (so they belong up here, in the runner's layer).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..contracts import RunnerClass, RunnerProtocol

if TYPE_CHECKING:
    from ..contracts import (
        LogProcessorView,
        LoopView,
        MessageHubView,
        OptimWrapperView,
        RunPathsView,
        StrategyView,
        VisualizerView,
    )
    from ..hooks.log_processor import LogProcessor
    from ..logging import MessageHub
    from ..loops.base_loop import BaseLoop
    from ..optim import OptimWrapper
    from ..strategies.base import BaseStrategy
    from ..visualization import Visualizer
    from .paths import RunPaths
    from .runner import Runner


def _runner_satisfies_protocol(runner: Runner) -> RunnerProtocol:
    """Never called: mypy fails here when :class:`Runner` drifts from the protocol."""
    return runner


def _runner_class_satisfies_contract(runner_cls: type[Runner]) -> RunnerClass:
    """Never called: mypy fails here when ``Runner.from_cfg`` drifts from the contract."""
    return runner_cls


def _parts_satisfy_views(
    loop: BaseLoop,
    hub: MessageHub,
    visualizer: Visualizer,
    log_processor: LogProcessor,
    optim_wrapper: OptimWrapper,
    strategy: BaseStrategy,
    paths: RunPaths,
) -> tuple[
    LoopView,
    MessageHubView,
    VisualizerView,
    LogProcessorView,
    OptimWrapperView,
    StrategyView,
    RunPathsView,
]:
    """Never called: mypy fails here when a part's class drifts from its view."""
    return loop, hub, visualizer, log_processor, optim_wrapper, strategy, paths


__all__ = ["RunnerClass", "RunnerProtocol"]
