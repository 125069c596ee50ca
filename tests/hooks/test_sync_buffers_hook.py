"""SyncBuffersHook: buffers become the mean over ranks (2 gloo processes)."""

from __future__ import annotations

import pytest
import torch
from runner_double import StandInRunner
from torch import nn

from cadence.dist.testing import run_distributed
from cadence.hooks import SyncBuffersHook


class Wrapper(nn.Module):
    """Stands in for DDP: the user's model sits in ``module``."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module


def _stand_in(model: nn.Module) -> StandInRunner:
    return StandInRunner(model=Wrapper(model))  # its BaseStrategy unwraps ``module``


def _set(bn: nn.BatchNorm1d, mean: list[float], var: list[float], count: int) -> None:
    bn.running_mean.copy_(torch.tensor(mean))
    bn.running_var.copy_(torch.tensor(var))
    bn.num_batches_tracked.fill_(count)


def _sync_on_each_rank() -> dict[str, list]:
    rank = torch.distributed.get_rank()
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3), nn.BatchNorm1d(3).double())
    runner = _stand_in(model)
    hook = SyncBuffersHook()
    out: dict[str, list] = {}
    if rank == 0:
        _set(model[1], [1.0, 2.0, 3.0], [1.0, 1.0, 1.0], 4)
        _set(model[2], [0.5, 0.5, 0.5], [2.0, 2.0, 2.0], 4)
    else:
        _set(model[1], [3.0, 6.0, -3.0], [3.0, 5.0, 1.0], 7)
        _set(model[2], [1.5, 0.0, 0.5], [4.0, 2.0, 0.0], 4)
    hook.after_train_epoch(runner)
    out["mean"] = model[1].running_mean.tolist()
    out["var"] = model[1].running_var.tolist()
    out["count"] = [int(model[1].num_batches_tracked)]
    out["mean64"] = model[2].running_mean.tolist()
    out["dtype64"] = [str(model[2].running_mean.dtype)]
    # right after a training epoch, validation does not sync again ...
    model[1].running_mean.fill_(float(rank))
    hook.before_val_epoch(runner)
    out["after_val1"] = model[1].running_mean.tolist()
    # ... but a validation without a training epoch before it (iteration loop) does
    hook.before_val_epoch(runner)
    out["after_val2"] = model[1].running_mean.tolist()
    return out


@pytest.mark.dist
def test_buffers_become_the_mean_over_ranks():
    rank0, rank1 = run_distributed(_sync_on_each_rank, world_size=2, timeout=30)
    for out in (rank0, rank1):
        assert out["mean"] == [2.0, 4.0, 0.0]
        assert out["var"] == [2.0, 3.0, 1.0]
        assert out["count"] == [5]  # integer buffers: floor of the mean of 4 and 7
        assert out["mean64"] == [1.0, 0.25, 0.5]
        assert out["dtype64"] == ["torch.float64"]
        assert out["after_val2"] == [0.5, 0.5, 0.5]
    assert rank0["after_val1"] == [0.0] * 3 and rank1["after_val1"] == [1.0] * 3


def test_single_process_leaves_buffers_alone():
    model = nn.BatchNorm1d(2)
    model.running_mean.fill_(3.0)
    SyncBuffersHook().after_train_epoch(_stand_in(model))
    assert model.running_mean.tolist() == [3.0, 3.0]
