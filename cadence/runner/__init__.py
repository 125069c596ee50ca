"""The runner: builds a run from a config and drives its loops."""

from ..checkpoint import (
    CheckpointError,
    find_latest_checkpoint,
    load_checkpoint,
    publish_checkpoint,
)
from ..logging import LogProcessor as LogProcessor  # at mmengine's path, mmengine.runner
from .errors import RunnerOrderError
from .hook_manager import HookManager
from .protocol import RunnerProtocol
from .runner import DEFAULT_HOOKS, RUNNER_KEYS, FlexibleRunner, Runner

__all__ = [
    "CheckpointError", "DEFAULT_HOOKS", "FlexibleRunner", "HookManager", "RUNNER_KEYS",
    "Runner", "RunnerOrderError", "RunnerProtocol", "find_latest_checkpoint", "load_checkpoint",
    "publish_checkpoint",
]  # fmt: skip
