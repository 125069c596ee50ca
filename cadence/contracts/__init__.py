"""The interfaces that code below the runner programs against.

Hooks, loops, the log processor, metrics and strategies are given a runner, but they
sit below ``cadence.runner`` in the layer order, so they cannot import it (not even for
type checking: a contract that type-imports its users makes every module one cycle).
This package holds what they may use instead, as structural types:

- :class:`RunnerProtocol`, the runner as the rest of cadence sees it
  (:mod:`.runner`; ``cadence.runner.RunnerProtocol`` is the same class), the
  runner class as the registry builds it (:class:`RunnerClass`), and the view of
  the log processor, whose methods take that runner;
- narrow views of the other parts a runner hands out (:mod:`.parts`): a loop, the
  message hub, the visualizer, the optimizer wrapper, the strategy, the run's paths;
  and :class:`Trained`, the model, optimizer wrapper and schedulers that the runner
  owns and hands to its strategy.

It imports only ``cadence.config`` (for :class:`~cadence.config.Config`) and
``cadence.utils``, and only for type checking; the layer test enforces that.
"""

from __future__ import annotations

from .parts import (
    LoopView,
    MessageHubView,
    OptimWrapperView,
    RunPathsView,
    Schedulers,
    StagingView,
    StrategyView,
    Trained,
    VisualizerView,
)
from .runner import LogProcessorView, RunnerClass, RunnerProtocol

__all__ = [
    "LogProcessorView",
    "LoopView",
    "MessageHubView",
    "OptimWrapperView",
    "RunPathsView",
    "RunnerClass",
    "RunnerProtocol",
    "Schedulers",
    "StagingView",
    "StrategyView",
    "Trained",
    "VisualizerView",
]
