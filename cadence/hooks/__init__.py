"""Hooks: the Hook base class, priorities and the built-in hooks."""

from ..registry.constraints import validated_by_construction
from .check_invalid_loss_hook import CheckInvalidLossHook, InvalidLossError
from .checkpoint_hook import CheckpointHook
from .early_stopping_hook import EarlyStoppingHook
from .ema_hook import EMAHook
from .empty_cache_hook import EmptyCacheHook
from .hook import Hook
from .iter_timer_hook import IterTimerHook
from .logger_hook import LoggerHook
from .multigrid_hook import MultigridHook
from .param_scheduler_hook import ParamSchedulerHook
from .precise_bn_hook import PreciseBNHook
from .preemption_hook import PreemptionHook, TrainingPreempted
from .priority import Priority, get_priority
from .profiler_hook import ProfilerHook
from .runtime_info_hook import RuntimeInfoHook
from .sampler_seed_hook import DistSamplerSeedHook
from .sync_buffers_hook import SyncBuffersHook

# Building a built-in hook only checks and stores its arguments, so `cadence check`
# runs each one's own validation by building it (see cadence.registry.constraints).
for _hook in (
    CheckInvalidLossHook, CheckpointHook, DistSamplerSeedHook, EarlyStoppingHook, EMAHook,
    EmptyCacheHook, IterTimerHook, LoggerHook, MultigridHook, ParamSchedulerHook,
    PreciseBNHook, PreemptionHook, ProfilerHook, RuntimeInfoHook, SyncBuffersHook,
):  # fmt: skip
    validated_by_construction(_hook)
del _hook

__all__ = [
    "CheckInvalidLossHook", "EarlyStoppingHook", "EMAHook", "EmptyCacheHook",
    "InvalidLossError", "MultigridHook", "PreciseBNHook", "PreemptionHook", "ProfilerHook",
    "SyncBuffersHook", "TrainingPreempted",
    "CheckpointHook", "DistSamplerSeedHook", "Hook", "IterTimerHook", "LoggerHook",
    "ParamSchedulerHook", "Priority", "RuntimeInfoHook", "get_priority",
]  # fmt: skip
