"""Tell the training sampler which epoch starts, so shuffling differs per epoch."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


@HOOKS.register_module()
class DistSamplerSeedHook(Hook):
    """Call ``set_epoch(epoch)`` on the train dataloader's sampler (and batch sampler's)."""

    priority = "NORMAL"

    def before_train_epoch(self, runner: RunnerProtocol) -> None:
        loader = runner.train_loop.dataloader
        for sampler in (getattr(loader, "sampler", None), getattr(loader, "batch_sampler", None)):
            for candidate in (sampler, getattr(sampler, "sampler", None)):
                set_epoch = getattr(candidate, "set_epoch", None)
                if callable(set_epoch):
                    set_epoch(runner.epoch)


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(DistSamplerSeedHook)
