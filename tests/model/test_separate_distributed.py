"""SeparateDistributedDataParallel: each trainable child gets its own DDP (real gloo ranks)."""

from __future__ import annotations

import datetime
import os

import pytest
import torch
import torch.multiprocessing as mp
from torch import nn

from cadence.dist.testing import free_port


class Gan(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.generator = nn.Linear(2, 2)
        self.discriminator = nn.Linear(2, 1)
        self.frozen = nn.Linear(2, 2).requires_grad_(False)


def _worker(rank: int, port: int, results) -> None:  # type: ignore[no-untyped-def]
    import torch.distributed as dist

    from cadence.model import MMSeparateDistributedDataParallel, is_model_wrapper
    from cadence.model.wrappers.distributed import CadenceDistributedDataParallel

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("gloo", rank=rank, world_size=2, timeout=datetime.timedelta(seconds=30))
    try:
        wrapper = MMSeparateDistributedDataParallel(Gan())
        gan = wrapper.module
        kinds = [type(gan.generator), type(gan.discriminator), type(gan.frozen)]
        # only the generator runs: its DDP averages its gradients, the other's DDP is not in the way
        gan.generator(torch.full((1, 2), float(rank + 1))).sum().backward()
        with wrapper.no_sync():
            gan.generator(torch.full((1, 2), float(rank + 1))).sum().backward()
        results.put((rank, is_model_wrapper(wrapper), kinds == [
            CadenceDistributedDataParallel, CadenceDistributedDataParallel, nn.Linear
        ], gan.generator.module.weight.grad.tolist()))  # fmt: skip
    finally:
        dist.destroy_process_group()


@pytest.mark.dist
def test_trainable_children_are_wrapped_and_synced_separately() -> None:
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_worker, args=(r, port, results)) for r in range(2)]
    for proc in procs:
        proc.start()
    got = {}
    try:
        for _ in range(2):
            rank, wrapped, kinds_ok, grad = results.get(timeout=60)
            got[rank] = (wrapped, kinds_ok, grad)
    finally:
        for proc in procs:
            proc.join(timeout=10)
            if proc.is_alive():
                proc.kill()
    assert all(proc.exitcode == 0 for proc in procs)
    for rank in (0, 1):
        wrapped, kinds_ok, grad = got[rank]
        assert wrapped and kinds_ok
        # synced pass: mean of inputs 1 and 2 (1.5); the no_sync pass adds this rank's own
        assert grad == [[1.5 + rank + 1] * 2] * 2
