"""Release the CUDA caching allocator's unused memory at chosen points of a run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol

_EPOCH_BEFORE = ("before_train_epoch", "before_val_epoch", "before_test_epoch")
_EPOCH_AFTER = ("after_train_epoch", "after_val_epoch", "after_test_epoch")
_ITER_AFTER = ("after_train_iter", "after_val_iter", "after_test_iter")


def empty_cache() -> None:
    """Release cached CUDA memory (a no-op while CUDA is not initialized)."""
    torch.cuda.empty_cache()


@HOOKS.register_module()
class EmptyCacheHook(Hook):
    """Call ``torch.cuda.empty_cache()`` before/after epochs or after iterations.

    Applies to training, validation and testing alike. Only the chosen points
    are registered with the runner, so disabled ones cost nothing.

    Args:
        before_epoch: before each epoch.
        after_epoch: after each epoch.
        after_iter: after each iteration (slow; for debugging fragmentation).
    """

    priority = "NORMAL"

    def __init__(
        self, before_epoch: bool = False, after_epoch: bool = True, after_iter: bool = False
    ) -> None:
        self._stages = (
            (_EPOCH_BEFORE if before_epoch else ())
            + (_EPOCH_AFTER if after_epoch else ())
            + (_ITER_AFTER if after_iter else ())
        )

    def implemented_stages(self) -> list[str]:
        """Only the enabled points."""
        return [s for s in self.stages if s in self._stages]

    def before_train_epoch(self, runner: RunnerProtocol) -> None:
        empty_cache()

    def before_val_epoch(self, runner: RunnerProtocol) -> None:
        empty_cache()

    def before_test_epoch(self, runner: RunnerProtocol) -> None:
        empty_cache()

    def after_train_epoch(self, runner: RunnerProtocol) -> None:
        empty_cache()

    def after_val_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        empty_cache()

    def after_test_epoch(
        self, runner: RunnerProtocol, metrics: dict[str, Any] | None = None
    ) -> None:
        empty_cache()

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        empty_cache()

    def after_val_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        empty_cache()

    def after_test_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        empty_cache()


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(EmptyCacheHook)
