"""The runner: builds a run from a config and drives its loops."""

from .checkpoint import find_latest_checkpoint
from .hook_manager import HookManager
from .runner import DEFAULT_HOOKS, RUNNER_KEYS, FlexibleRunner, Runner

__all__ = [
    "DEFAULT_HOOKS", "FlexibleRunner", "HookManager", "RUNNER_KEYS", "Runner",
    "find_latest_checkpoint",
]  # fmt: skip
