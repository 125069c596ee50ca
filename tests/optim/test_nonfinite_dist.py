"""Two gloo ranks: a non-finite loss on one rank skips the step on both, and the validation
loss is the exact mean over both ranks' samples."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from cadence import dist
from cadence.dist.testing import run_distributed
from cadence.loops.val_loss import LossMeter
from cadence.optim import build_optim_wrapper

pytestmark = pytest.mark.dist


def _train_with_a_fault_on_rank_1() -> dict:
    rank = dist.get_rank()
    torch.manual_seed(0)  # the same model on both ranks, no DDP: only the guard keeps them equal
    model = nn.Linear(2, 1)
    wrapper = build_optim_wrapper(
        model, dict(optimizer=dict(type="SGD", lr=0.1), skip_nonfinite=True, max_consecutive=3)
    )
    weights = []
    for it in range(4):
        loss = model(torch.ones(1, 2)).sum()
        if rank == 1 and it == 1:
            loss = loss + math.nan  # this rank only; its gradients stay finite
        wrapper.update_params(loss)
        weights.append(model.weight.detach().clone().tolist())
    meter = LossMeter()  # rank 0: 3 samples of loss 1; rank 1: 1 sample of loss 5
    meter.add({"loss": torch.tensor(1.0)}, 3) if rank == 0 else meter.add(
        {"loss": torch.tensor(5.0)}, 1
    )
    return {"weights": weights, "skipped": wrapper.nonfinite_guard.skipped, "val": meter.result()}


def test_a_fault_on_one_rank_skips_the_step_on_both():
    out = run_distributed(_train_with_a_fault_on_rank_1, world_size=2, timeout=60)
    assert out[0]["weights"] == out[1]["weights"]
    w = out[0]["weights"]
    assert w[1] == w[0] and w[2] != w[1] and w[3] != w[2]  # step 1 skipped; training goes on
    assert out[0]["skipped"] == out[1]["skipped"] == 1
    assert out[0]["val"] == out[1]["val"] == {"loss": pytest.approx(2.0)}  # (3 + 5) / 4
