"""DistributedDataParallel whose ``train_step`` goes through the wrapper (DDPStrategy's)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from ...registry import MODEL_WRAPPERS
from ...resilience import heartbeat
from ...resilience.heartbeat import GRADIENT_SYNC
from ..base_model import run_train_step


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
