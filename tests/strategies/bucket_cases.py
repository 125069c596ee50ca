"""Ranks of tests/strategies/test_ddp_buckets.py (module level, so that run_distributed
can pickle them): a 7-layer MLP whose gradients fill two DDP buckets, trained 8 SGD steps
straight through, and again with a "resume" after step 3 into a new wrapper."""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

WIDTH, STEPS, AT = 192, 8, 3


def _steps(ddp: nn.Module, opt: torch.optim.Optimizer, data: list[torch.Tensor], lo: int,
           hi: int) -> None:  # fmt: skip
    for i in range(lo, hi):
        opt.zero_grad()
        ddp(data[i]).pow(2).mean().backward()
        opt.step()


def straight_and_resumed(pin: bool, comm_hook: bool) -> dict[str, Any]:
    from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import fp16_compress_hook

    from cadence.strategies.ddp import CadenceDistributedDataParallel

    torch.set_num_threads(1)
    rank = torch.distributed.get_rank()
    torch.manual_seed(0)
    layers = [nn.Sequential(nn.Linear(WIDTH, WIDTH), nn.Tanh()) for _ in range(6)]
    base = nn.Sequential(*layers, nn.Linear(WIDTH, 1))
    data = [torch.randn(5, WIDTH, generator=torch.Generator().manual_seed(100 * rank + i))
            for i in range(STEPS)]  # fmt: skip

    def wrap(module: nn.Module) -> CadenceDistributedDataParallel:
        ddp = CadenceDistributedDataParallel(module, bucket_cap_mb=0.3)
        if comm_hook:
            ddp.register_comm_hook(None, fp16_compress_hook)
        return ddp

    straight = wrap(copy.deepcopy(base))
    opt = torch.optim.SGD(straight.parameters(), lr=0.1)
    _steps(straight, opt, data, 0, STEPS)
    first = wrap(copy.deepcopy(base))
    opt_first = torch.optim.SGD(first.parameters(), lr=0.1)
    _steps(first, opt_first, data, 0, AT)
    resumed = wrap(copy.deepcopy(first.module))
    opt_resumed = torch.optim.SGD(resumed.parameters(), lr=0.1)
    opt_resumed.load_state_dict(copy.deepcopy(opt_first.state_dict()))
    assert first.bucket_order is not None
    pinned = resumed.pin_bucket_order(first.bucket_order) if pin else False
    _steps(resumed, opt_resumed, data, AT, STEPS)
    return {
        "pinned": pinned,
        "again": resumed.pin_bucket_order(first.bucket_order),  # after a step: refused
        "order": first.bucket_order,
        "buckets": resumed._get_ddp_logging_data().get("rebuilt_bucket_sizes"),
        "equal": all(torch.equal(a, b)
                     for a, b in zip(straight.parameters(), resumed.parameters())),
    }  # fmt: skip
