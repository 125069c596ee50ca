"""Hooks: the Hook base class, priorities and the built-in hooks.

Each name is imported from its module on first use (``LAZY_EXPORTS``), so importing
one hook, or the runner, does not import every built-in hook; the ``HOOKS`` registry
imports only the module of the hook it is asked for.
"""

from __future__ import annotations

from ..utils.lazy import lazy_exports

#: name -> the module that defines it.
LAZY_EXPORTS: dict[str, str] = {
    "CheckInvalidLossHook": ".check_invalid_loss_hook",
    "InvalidLossError": ".check_invalid_loss_hook",
    "CheckpointHook": ".checkpoint_hook",
    "EarlyStoppingHook": ".early_stopping_hook",
    "EMAHook": ".ema_hook",
    "EmptyCacheHook": ".empty_cache_hook",
    "Hook": ".hook",
    "IterTimerHook": ".iter_timer_hook",
    "LoggerHook": ".logger_hook",
    "MultigridHook": ".multigrid_hook",
    "NaiveVisualizationHook": ".naive_visualization_hook",
    "ParamSchedulerHook": ".param_scheduler_hook",
    "PreciseBNHook": ".precise_bn_hook",
    "PreemptionHook": ".preemption_hook",
    "PrepareTTAHook": ".test_time_aug_hook",
    "TrainingPreempted": "..resilience.preempted",
    "Priority": ".priority",
    "get_priority": ".priority",
    "ProfilerHook": ".profiler_hook",
    "NPUProfilerHook": ".profiler_hook",
    "RuntimeInfoHook": ".runtime_info_hook",
    "DistSamplerSeedHook": ".sampler_seed_hook",
    "SyncBuffersHook": ".sync_buffers_hook",
}

__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
