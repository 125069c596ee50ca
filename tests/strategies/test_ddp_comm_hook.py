"""DDPStrategy(comm_hook='fp16'|'bf16'): gradients travel in half precision (2 gloo ranks).

The expected gradient is computed independently: each rank's local gradient
(from an unwrapped copy of the model) cast to the half type, divided by the
world size, summed, and cast back -- what detectron2's ``fp16_compression``
(torch's ``fp16_compress_hook``) does to every bucket.
"""

from __future__ import annotations

import copy

import pytest
import torch
import torch.distributed as dist
from torch import nn

from cadence.dist.testing import run_distributed
from cadence.strategies import DDPStrategy

_HALF = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp16_compress": torch.float16}


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))


def _grads_and_training(comm_hook: str | None) -> dict:
    rank = dist.get_rank()
    model = _model()
    reference = copy.deepcopy(model)
    wrapped = DDPStrategy(device="cpu", comm_hook=comm_hook).wrap_model(model)
    gen = torch.Generator().manual_seed(100 + rank)
    x = torch.randn(8, 16, generator=gen) * (1 + 3 * rank)  # ranks see different data
    wrapped(x).pow(2).mean().backward()
    reference(x).pow(2).mean().backward()
    local = []
    for param in reference.parameters():
        assert param.grad is not None
        parts = [torch.empty_like(param.grad) for _ in range(dist.get_world_size())]
        dist.all_gather(parts, param.grad)
        local.append([p.numpy() for p in parts])
    synced = [p.grad.detach().numpy().copy() for p in model.parameters()]  # type: ignore[union-attr]

    # a short regression run through the hook still converges
    torch.manual_seed(1)
    target = torch.randn(16, 4)
    optimizer = torch.optim.SGD(wrapped.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        optimizer.zero_grad()
        loss = (wrapped(x) - x @ target).pow(2).mean()
        loss.backward()
        optimizer.step()
        losses.append(float(loss))
    return {"synced": synced, "local": local, "losses": losses, "wrapper": type(wrapped).__name__}


def _expected(local: list, half: torch.dtype | None) -> list[torch.Tensor]:
    out = []
    for per_rank in local:
        grads = [torch.from_numpy(g) for g in per_rank]
        if half is None:
            out.append(sum(grads) / len(grads))
        else:
            summed = sum(g.to(half) / len(grads) for g in grads)
            out.append(summed.float())  # type: ignore[union-attr]
    return out


@pytest.mark.dist
@pytest.mark.parametrize("comm_hook", ["fp16", "bf16"])
def test_compressed_gradients_are_half_precision_averages(comm_hook):
    results = run_distributed(_grads_and_training, comm_hook, timeout=90)
    half = _HALF[comm_hook]
    for result in results:
        assert result["wrapper"] == "CadenceDistributedDataParallel"
        synced = [torch.from_numpy(g) for g in result["synced"]]
        exact = _expected(result["local"], None)
        compressed = _expected(result["local"], half)
        rounded = False
        for got, want, full in zip(synced, compressed, exact):
            torch.testing.assert_close(got, want, rtol=0, atol=0)  # the hook ran on this bucket
            tol = 2e-3 if half is torch.float16 else 2e-2
            torch.testing.assert_close(got, full, rtol=tol, atol=tol * full.abs().max().item())
            rounded = rounded or not torch.equal(got, full)
        assert rounded, "no half-precision rounding: the compression hook did not run"
        assert result["losses"][-1] < 0.5 * result["losses"][0]
    assert results[0]["synced"][0].tolist() == results[1]["synced"][0].tolist()


def test_hook_names_and_aliases():
    assert DDPStrategy(comm_hook="fp16").comm_hook == "fp16"
    assert DDPStrategy(comm_hook="bf16_compress").comm_hook == "bf16_compress"
    with pytest.raises(ValueError, match="Did you mean 'fp16'"):
        DDPStrategy(comm_hook="fp61")
