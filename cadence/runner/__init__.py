"""The runner: builds a run from a config and drives its loops.

Names are imported on first use (:mod:`cadence.utils.lazy`): ``from cadence.runner import
Runner`` imports the runner's module, not the checkpoint or loop packages re-exported here.
"""

from __future__ import annotations

from ..utils.lazy import lazy_exports

#: name -> the module that defines it, imported when the name is first read.
LAZY_EXPORTS: dict[str, str] = {
    "BaseLoop": "..loops.base_loop",
    "CheckpointError": "..checkpoint",
    "CheckpointLoader": ".checkpoint",
    "DEFAULT_HOOKS": ".runner",
    "EpochBasedTrainLoop": "..loops.train_loops",
    "FlexibleRunner": ".runner",
    "HookManager": ".hook_manager",
    "IterBasedTrainLoop": "..loops.train_loops",
    "LogProcessor": "..hooks.log_processor",  # at mmengine's path, mmengine.runner
    "Priority": "..hooks.priority",
    "RUNNER_KEYS": ".runner",
    "Runner": ".runner",
    "RunnerOrderError": ".errors",
    "RunnerProtocol": "..contracts",
    "TestLoop": "..loops.val_loops",
    "ValLoop": "..loops.val_loops",
    "autocast": ".amp",
    "find_latest_checkpoint": "..checkpoint",
    "get_priority": "..hooks.priority",
    "get_state_dict": ".checkpoint",
    "load_checkpoint": "..checkpoint",
    "load_state_dict": ".checkpoint",
    "publish_checkpoint": "..checkpoint",
    "save_checkpoint": ".checkpoint",
    "set_random_seed": "..strategies.env",
    "turn_on_activation_checkpointing": ".activation_checkpointing",
    "weights_to_cpu": ".checkpoint",
}

__all__ = sorted(LAZY_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
