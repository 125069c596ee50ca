"""DDPStrategy(broadcast_buffers=...): rank 0's buffers reach every rank at each forward
(default) or stay rank-local (False), without torch's deprecation warning by default."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.distributed as dist
from torch import nn

from cadence.dist.testing import run_distributed
from cadence.strategies import DDPStrategy


class WithBuffer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.register_buffer("stat", torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def _buffer_after_forward(broadcast_buffers: bool | None) -> tuple[float, list[str]]:
    torch.manual_seed(0)
    model = WithBuffer()
    kwargs = {} if broadcast_buffers is None else {"broadcast_buffers": broadcast_buffers}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        wrapped = DDPStrategy(device="cpu", **kwargs).wrap_model(model)
    model.stat.fill_(float(dist.get_rank() + 1))  # ranks diverge after wrapping
    wrapped(torch.ones(1, 2)).sum().backward()
    messages = [str(w.message) for w in caught if "broadcast_buffers" in str(w.message)]
    return float(model.stat.item()), messages


@pytest.mark.dist
def test_default_syncs_buffers_each_forward_without_a_deprecation_warning():
    results = run_distributed(_buffer_after_forward, None, world_size=2, timeout=120)
    assert [value for value, _ in results] == [1.0, 1.0]  # rank 0's value everywhere
    assert all(not messages for _, messages in results)


@pytest.mark.dist
def test_broadcast_buffers_false_keeps_buffers_rank_local():
    results = run_distributed(_buffer_after_forward, False, world_size=2, timeout=120)
    assert [value for value, _ in results] == [1.0, 2.0]
