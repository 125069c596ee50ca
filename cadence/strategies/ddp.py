"""Data-parallel training with ``torch.nn.parallel.DistributedDataParallel``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch import nn

from ..model.wrappers.distributed import CadenceDistributedDataParallel
from ..registry import STRATEGIES
from ..utils import did_you_mean
from .distributed import DistributedStrategy

if TYPE_CHECKING:
    from ..contracts import Trained

#: ``comm_hook`` names -> the hook of ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``
#: (``None``: DDP's built-in all-reduce).
COMM_HOOKS: dict[str, str | None] = {
    "fp16": "fp16_compress_hook",
    "fp16_compress": "fp16_compress_hook",
    "bf16": "bf16_compress_hook",
    "bf16_compress": "bf16_compress_hook",
    "allreduce": None,
}


@STRATEGIES.register_module()
class DDPStrategy(DistributedStrategy):
    """One process per device; gradients averaged across processes every update.

    Args:
        sync_bn: convert BatchNorm layers to SyncBatchNorm (``'torch'`` or True).
        find_unused_parameters / broadcast_buffers / static_graph: passed to DDP.
        comm_hook: ``'fp16'`` (alias ``'fp16_compress'``) or ``'bf16'`` (alias
            ``'bf16_compress'``) to send gradients in half precision (half the
            bytes; detectron2's ``create_ddp_model(fp16_compression=True)``):
            each bucket is cast, divided by the world size, all-reduced and cast
            back, so gradients carry half-precision rounding (torch's
            ``fp16_compress_hook``/``bf16_compress_hook``; torch's bf16 hook
            refuses builds without NCCL, so backends other than NCCL get
            :func:`bf16_average_hook`, which does the same). ``None`` or
            ``'allreduce'``: full-precision all-reduce.
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
        if comm_hook is not None and comm_hook not in COMM_HOOKS:
            raise ValueError(
                f"DDPStrategy.comm_hook must be one of {', '.join(map(repr, COMM_HOOKS))} or "
                f"None, got {comm_hook!r}.{did_you_mean(str(comm_hook), COMM_HOOKS)}"
            )
        self.sync_bn = sync_bn
        self.comm_hook = comm_hook
        self.ddp_kwargs = dict(
            find_unused_parameters=find_unused_parameters, static_graph=static_graph, **ddp_kwargs
        )
        self.ddp_kwargs.update(_buffer_sync_kwargs(broadcast_buffers, self.ddp_kwargs))

    def wrap_model(self, model: nn.Module) -> nn.Module:
        if self.sync_bn:
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        if not any(p.requires_grad for p in model.parameters()):
            return model  # nothing to synchronise (e.g. evaluation of a frozen model)
        device_ids = [self.device.index] if self.device.type == "cuda" else None
        wrapped = CadenceDistributedDataParallel(model, device_ids=device_ids, **self.ddp_kwargs)
        hook_name = COMM_HOOKS.get(self.comm_hook) if self.comm_hook is not None else None
        if hook_name is not None:
            wrapped.register_comm_hook(state=None, hook=_comm_hook(hook_name))
        return wrapped

    def checkpoint_state(
        self, trained: Trained, *, save_optimizer: bool = True, save_param_scheduler: bool = True
    ) -> dict[str, Any]:
        """The one-file state, and the order in which the gradients became ready (which
        decides DDP's bucket layout: :meth:`CadenceDistributedDataParallel.pin_bucket_order`)."""
        state = super().checkpoint_state(
            trained, save_optimizer=save_optimizer, save_param_scheduler=save_param_scheduler
        )
        order = getattr(trained.model, "bucket_order", None)
        if order is not None:
            state[BUCKET_ORDER_KEY] = list(order)
        return state

    def restore(
        self,
        trained: Trained,
        filename: str,
        checkpoint: dict[str, Any],
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
    ) -> None:
        """Restore the state, and build the saving run's gradient buckets before the first
        step, so that a resume on three or more processes adds up every gradient in the
        same order as the uninterrupted run did (bit-exact, not just to rounding)."""
        super().restore(
            trained, filename, checkpoint, resume_optimizer=resume_optimizer,
            resume_param_scheduler=resume_param_scheduler,
        )  # fmt: skip
        order = checkpoint.get(BUCKET_ORDER_KEY)
        model = trained.model
        if isinstance(model, CadenceDistributedDataParallel) and order is not None:
            model.pin_bucket_order(order)


#: The checkpoint key of the saving run's gradient ready order (a list of ints).
BUCKET_ORDER_KEY = "ddp_bucket_order"


def _buffer_sync_kwargs(broadcast_buffers: bool, given: dict[str, Any]) -> dict[str, Any]:
    """DDP's buffer-sync argument for this torch: torch >= 2.13 deprecates
    ``broadcast_buffers`` for ``forward_sync_buffers`` (the same forward sync; buffers are
    still synced at init). ``broadcast_buffers=False`` keeps its old meaning (no init sync
    either), which only the old argument expresses."""
    import inspect

    if "forward_sync_buffers" in given:
        return {}
    params = inspect.signature(nn.parallel.DistributedDataParallel.__init__).parameters
    if broadcast_buffers and "forward_sync_buffers" in params:
        return {"forward_sync_buffers": True}
    return {"broadcast_buffers": broadcast_buffers}


def _comm_hook(name: str) -> Any:
    """torch's hook ``name``; on backends other than NCCL a gloo-capable bf16 hook."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    if name == "bf16_compress_hook" and dist.get_backend() != "nccl":
        return bf16_average_hook  # torch's refuses CPU-only builds; gloo sums bf16 fine
    return getattr(default_hooks, name)


def bf16_average_hook(state: Any, bucket: dist.GradBucket) -> torch.futures.Future[torch.Tensor]:
    """DDP comm hook: all-reduce a gradient bucket in bfloat16, averaged, then write it back."""
    group = state if state is not None else dist.group.WORLD
    buffer = bucket.buffer()
    compressed = buffer.to(torch.bfloat16).div_(dist.get_world_size(group))
    future = dist.all_reduce(compressed, group=group, async_op=True).get_future()

    def write_back(done: torch.futures.Future[Any]) -> torch.Tensor:
        buffer.copy_(done.value()[0])
        return buffer

    return future.then(write_back)


# DDP checks the hook's annotations as objects, not the strings of postponed evaluation
bf16_average_hook.__annotations__ = {
    "state": Any, "bucket": getattr(dist, "GradBucket", Any),  # absent without distributed
    "return": torch.futures.Future[torch.Tensor],
}  # fmt: skip
