"""Training on one device: CPU or a single GPU."""

from __future__ import annotations

from torch import nn

from ..registry import STRATEGIES
from .base import BaseStrategy


@STRATEGIES.register_module()
class SingleDeviceStrategy(BaseStrategy):
    """One process, one device (the first GPU when there is one, else the CPU).

    As mmengine's non-distributed runner, the model's ``SyncBatchNorm`` layers become
    ``BatchNorm`` (sharing their parameters and statistics): with one process there is
    nothing to synchronise, and configs written for several GPUs (``norm_cfg=
    dict(type='SyncBN')``) run unchanged.
    """

    def wrap_model(self, model: nn.Module) -> nn.Module:
        """The model with its SyncBatchNorm layers reverted to BatchNorm."""
        from ..model.utils import revert_sync_batchnorm

        return revert_sync_batchnorm(model)
