"""Checkpoints: crash-safe files with verified manifests, and the manager that saves and
restores a whole run through its strategy (docs/checkpoints.md)."""

from .files import (
    BeforeLoad,
    CheckpointError,
    atomic_torch_save,
    manifest_path,
    read_checkpoint,
    read_manifest,
    safe_torch_load,
    verify_checkpoint,
)
from .manager import CheckpointManager, Stateful
from .pointer import (
    LAST_CHECKPOINT,
    checkpoint_candidates,
    find_latest_checkpoint,
    resolve_checkpoint,
)
from .publish import publish_checkpoint
from .removal import remove_checkpoint
from .resume_search import ResumeSearch
from .steps import CheckpointSteps
from .weights import load_checkpoint, load_state_dict_into, model_weights

__all__ = [
    "BeforeLoad", "CheckpointError", "CheckpointManager", "CheckpointSteps", "LAST_CHECKPOINT",
    "Stateful", "atomic_torch_save", "checkpoint_candidates", "find_latest_checkpoint",
    "load_checkpoint", "load_state_dict_into", "manifest_path", "model_weights",
    "publish_checkpoint", "read_checkpoint", "read_manifest", "remove_checkpoint",
    "ResumeSearch", "resolve_checkpoint",
    "safe_torch_load", "verify_checkpoint",
]  # fmt: skip
