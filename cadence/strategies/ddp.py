"""Data-parallel training with ``torch.nn.parallel.DistributedDataParallel``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from ..registry import MODEL_WRAPPERS, STRATEGIES
from .distributed import DistributedStrategy

COMM_HOOKS = ("fp16_compress", "bf16_compress", "allreduce")


@MODEL_WRAPPERS.register_module(name=["CadenceDistributedDataParallel",
                                      "MMDistributedDataParallel"])  # fmt: skip
class CadenceDistributedDataParallel(DistributedDataParallel):
    """DDP whose ``train_step`` runs the forward pass through the wrapper.

    Going through the wrapper is what makes DDP all-reduce the gradients, and
    passing the wrapper to ``optim_context`` lets gradient accumulation skip
    that all-reduce (``no_sync``) on the steps that do not update.
    """

    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, Any]:
        module: Any = self.module
        with optim_wrapper.optim_context(self):
            data = module.data_preprocessor(data, training=True)
            if isinstance(data, Mapping):
                losses = self(**data, mode="loss")
            elif isinstance(data, (list, tuple)):
                losses = self(*data, mode="loss")
            else:
                raise TypeError(f"data must be a dict, list or tuple, got {type(data).__name__}")
        loss, log_vars = module.parse_losses(losses)
        optim_wrapper.update_params(loss)
        return log_vars

    def val_step(self, data: Any) -> Any:
        return self.module.val_step(data)

    def test_step(self, data: Any) -> Any:
        return self.module.test_step(data)


@STRATEGIES.register_module()
class DDPStrategy(DistributedStrategy):
    """One process per device; gradients averaged across processes every update.

    Args:
        sync_bn: convert BatchNorm layers to SyncBatchNorm (``'torch'`` or True).
        find_unused_parameters / broadcast_buffers / static_graph: passed to DDP.
        comm_hook: ``'fp16_compress'`` or ``'bf16_compress'`` to halve the bytes
            sent for gradients, or None.
        **ddp_kwargs: any other ``DistributedDataParallel`` argument.
    """

    def __init__(
        self,
        device: str | torch.device | None = None,
        sync_bn: bool | str = False,
        find_unused_parameters: bool = False,
        broadcast_buffers: bool = True,
        static_graph: bool = False,
        comm_hook: str | None = None,
        **ddp_kwargs: Any,
    ) -> None:
        super().__init__(device)
        if comm_hook not in (None, *COMM_HOOKS):
            raise ValueError(f"DDPStrategy.comm_hook must be one of {COMM_HOOKS} or None, "
                             f"got {comm_hook!r}")  # fmt: skip
        self.sync_bn = sync_bn
        self.comm_hook = comm_hook
        self.ddp_kwargs = dict(
            find_unused_parameters=find_unused_parameters,
            broadcast_buffers=broadcast_buffers,
            static_graph=static_graph,
            **ddp_kwargs,
        )

    def wrap_model(self, model: nn.Module) -> nn.Module:
        if self.sync_bn:
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        if not any(p.requires_grad for p in model.parameters()):
            return model  # nothing to synchronise (e.g. evaluation of a frozen model)
        device_ids = [self.device.index] if self.device.type == "cuda" else None
        wrapped = CadenceDistributedDataParallel(model, device_ids=device_ids, **self.ddp_kwargs)
        if self.comm_hook is not None and self.comm_hook != "allreduce":
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

            hook = getattr(default_hooks, f"{self.comm_hook}_hook")
            wrapped.register_comm_hook(state=None, hook=hook)
        return wrapped
