"""Hooks: the Hook base class, priorities and the built-in hooks."""

from .checkpoint_hook import CheckpointHook
from .hook import Hook
from .iter_timer_hook import IterTimerHook
from .logger_hook import LoggerHook
from .param_scheduler_hook import ParamSchedulerHook
from .priority import Priority, get_priority
from .runtime_info_hook import RuntimeInfoHook
from .sampler_seed_hook import DistSamplerSeedHook

__all__ = [
    "CheckpointHook", "DistSamplerSeedHook", "Hook", "IterTimerHook", "LoggerHook",
    "ParamSchedulerHook", "Priority", "RuntimeInfoHook", "get_priority",
]  # fmt: skip
