"""Data-parallel training with ``torch.nn.parallel.DistributedDataParallel``."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from ..model.base_model import run_train_step
from ..registry import MODEL_WRAPPERS, STRATEGIES
from ..utils import did_you_mean, heartbeat
from ..utils.heartbeat import GRADIENT_SYNC
from .distributed import DistributedStrategy

#: ``comm_hook`` names -> the hook of ``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``
#: (``None``: DDP's built-in all-reduce).
COMM_HOOKS: dict[str, str | None] = {
    "fp16": "fp16_compress_hook",
    "fp16_compress": "fp16_compress_hook",
    "bf16": "bf16_compress_hook",
    "bf16_compress": "bf16_compress_hook",
    "allreduce": None,
}


def _synced(parameter: torch.Tensor) -> None:
    heartbeat.current.phase = GRADIENT_SYNC


@MODEL_WRAPPERS.register_module(name=["CadenceDistributedDataParallel",
                                      "MMDistributedDataParallel"])  # fmt: skip
class CadenceDistributedDataParallel(DistributedDataParallel):
    """DDP whose ``train_step`` runs the forward pass through the wrapper.

    Going through the wrapper is what makes DDP all-reduce the gradients, and
    passing the wrapper to ``optim_context`` lets gradient accumulation skip
    that all-reduce (``no_sync``) on the steps that do not update.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # For the hang watchdog: the model's first parameter gets its gradient last in a
        # usual backward pass (DDP's buckets assume that order too); once it has, this rank
        # only waits for the others' gradients (a rank stuck in its backward pass has not)
        first = next((p for p in self.module.parameters() if p.requires_grad), None)
        if first is not None:
            first.register_post_accumulate_grad_hook(_synced)
        self.bucket_order: list[int] | None = None
        self._order_seen: list[int] = []
        self._order_hooks: list[Any] = []
        if self._rebuilds_buckets():
            self._watch_ready_order()

    # ------------------------------------------------------------ bucket layout
    # DDP all-reduces its gradients in buckets whose layout it rebuilds once, after a
    # process's first synchronised backward pass, in the order the gradients became ready.
    # Where a parameter sits in a bucket decides the order in which the ranks' values are
    # added up; with three or more ranks that order changes the rounding. A resumed
    # process would run its first step with the initial layout where the uninterrupted
    # run had the rebuilt one, and drift by rounding from then on. So the ready order is
    # recorded (by parameter, in module order), saved with the checkpoint, and a resumed
    # process builds the rebuilt layout from it before its first step.

    def _rebuilds_buckets(self) -> bool:
        return bool(self.static_graph or not self.find_unused_parameters)

    def _base_parameters(self) -> tuple[list[nn.Parameter], list[bool]]:
        params, sparse = DistributedDataParallel._build_params_for_reducer(self)
        return list(params), list(sparse)

    def _build_params_for_reducer(self) -> tuple[list[nn.Parameter], list[bool]]:
        """The reducer's parameters, in the pinned order when there is one."""
        params, sparse = self._base_parameters()
        order = getattr(self, "bucket_order", None)
        if order is not None and getattr(self, "_pinned", False):
            params, sparse = [params[i] for i in order], [sparse[i] for i in order]
        return params, sparse

    def _watch_ready_order(self) -> None:
        params, _ = self._base_parameters()
        for index, param in enumerate(params):
            self._order_hooks.append(
                param.register_post_accumulate_grad_hook(partial(self._ready, index, len(params)))
            )

    def _ready(self, index: int, count: int, param: torch.Tensor) -> None:
        if not self.require_backward_grad_sync:
            return  # DDP rebuilds after the first backward pass that synchronises
        self._order_seen.append(index)
        if len(self._order_seen) == count:
            self.bucket_order = list(self._order_seen)
            self._stop_watching()

    def _stop_watching(self) -> None:
        for handle in self._order_hooks:
            handle.remove()
        self._order_hooks.clear()

    def pin_bucket_order(self, order: Sequence[int]) -> bool:
        """Build the gradient buckets that a process whose gradients became ready in
        ``order`` (parameter indices in module order, from :attr:`bucket_order` of the run
        that saved) rebuilds after its first step, now, before this process's first step;
        False (nothing changed) when this model has run a synchronised step already, does
        not rebuild its buckets, or ``order`` is not an order of its parameters."""
        if self.bucket_order is not None or not self._rebuilds_buckets():
            return False
        count = len(self._base_parameters()[0])
        order = [int(i) for i in order]
        if sorted(order) != list(range(count)):
            return False
        self._stop_watching()
        self.bucket_order, self._pinned = order, True
        params, sparse = self._build_params_for_reducer()
        mapping = self._build_debug_param_to_name_mapping(params)
        self._ddp_init_helper(params, sparse, mapping, self.static_graph)  # a new reducer
        logger = self.logger
        assert logger is not None  # _ddp_init_helper made one for the new reducer
        if self.static_graph:
            self.reducer._set_static_graph()
            logger._set_static_graph()
        for hook, state in self._comm_hooks:  # registered on the reducer just replaced
            logger._set_comm_hook_name(hook.__qualname__)
            dist._register_comm_hook(self.reducer, state, hook)
        self.reducer._push_all_rebuilt_params()  # every parameter, in reducer (= pinned)
        self.reducer._rebuild_buckets()  # order: the layout the saving run rebuilt; final
        return True

    def train_step(self, data: Any, optim_wrapper: Any) -> dict[str, Any]:
        return run_train_step(self.module, data, optim_wrapper, self)

    def val_step(self, data: Any) -> Any:
        return self.module.val_step(data)

    def test_step(self, data: Any) -> Any:
        return self.module.test_step(data)


#: mmengine's name of the class.
MMDistributedDataParallel = CadenceDistributedDataParallel


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
        self, *, save_optimizer: bool = True, save_param_scheduler: bool = True
    ) -> dict[str, Any]:
        """The one-file state, and the order in which the gradients became ready (which
        decides DDP's bucket layout: :meth:`CadenceDistributedDataParallel.pin_bucket_order`)."""
        state = super().checkpoint_state(
            save_optimizer=save_optimizer, save_param_scheduler=save_param_scheduler
        )
        order = getattr(self.model, "bucket_order", None)
        if order is not None:
            state[BUCKET_ORDER_KEY] = list(order)
        return state

    def restore(
        self,
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
            filename, checkpoint, resume_optimizer=resume_optimizer,
            resume_param_scheduler=resume_param_scheduler,
        )  # fmt: skip
        order = checkpoint.get(BUCKET_ORDER_KEY)
        if isinstance(self.model, CadenceDistributedDataParallel) and order is not None:
            self.model.pin_bucket_order(order)


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
