"""The runner: builds a run from a config and drives its loops."""

from ..checkpoint import (
    CheckpointError,
    find_latest_checkpoint,
    load_checkpoint,
    publish_checkpoint,
)
from ..hooks.priority import Priority, get_priority
from ..logging import LogProcessor as LogProcessor  # at mmengine's path, mmengine.runner
from ..loops import BaseLoop, EpochBasedTrainLoop, IterBasedTrainLoop, TestLoop, ValLoop
from ..strategies.env import set_random_seed
from .amp import autocast
from .checkpoint import CheckpointLoader, get_state_dict, weights_to_cpu
from .errors import RunnerOrderError
from .hook_manager import HookManager
from .protocol import RunnerProtocol
from .runner import DEFAULT_HOOKS, RUNNER_KEYS, FlexibleRunner, Runner

__all__ = [
    "BaseLoop", "CheckpointError", "CheckpointLoader", "autocast", "get_state_dict",
    "weights_to_cpu", "DEFAULT_HOOKS", "EpochBasedTrainLoop", "FlexibleRunner",
    "HookManager", "IterBasedTrainLoop", "LogProcessor", "Priority", "RUNNER_KEYS", "Runner",
    "RunnerOrderError", "RunnerProtocol", "TestLoop", "ValLoop", "find_latest_checkpoint",
    "get_priority", "load_checkpoint", "publish_checkpoint", "set_random_seed",
]  # fmt: skip
