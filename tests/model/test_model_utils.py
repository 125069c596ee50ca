"""cadence.model.utils: stack_batch, merge_dict, detect_anomalous_params, SyncBN conversion."""

from __future__ import annotations

import logging

import pytest
import torch
from torch import nn

import cadence.model as model_pkg
from cadence.model import utils
from cadence.model.utils import (
    BatchNormXd,
    convert_sync_batchnorm,
    detect_anomalous_params,
    merge_dict,
    revert_sync_batchnorm,
    stack_batch,
)


def test_model_package_exports_the_helpers():
    for name in (
        "stack_batch", "merge_dict", "detect_anomalous_params", "revert_sync_batchnorm",
        "convert_sync_batchnorm",
    ):  # fmt: skip
        assert getattr(model_pkg, name) is getattr(utils, name)


def test_stack_batch_pads_right_and_bottom_to_the_divisor():
    images = [torch.ones(3, 5, 7), torch.ones(3, 8, 4)]
    batch = stack_batch(images, pad_size_divisor=4, pad_value=-1)
    assert batch.shape == (2, 3, 8, 8)
    assert batch[0, :, :5, :7].eq(1).all() and batch[0, :, 5:, :].eq(-1).all()
    assert batch[0, :, :, 7:].eq(-1).all() and batch[1, :, :, 4:].eq(-1).all()
    assert stack_batch([torch.ones(2, 3)]).shape == (1, 2, 3)
    assert stack_batch([torch.ones(2, 3)], pad_size_divisor=4).shape == (1, 2, 4)


def test_merge_dict_merges_in_order_and_traces():
    assert merge_dict(dict(a=1, b=2), dict(b=3), dict(c=4)) == {"a": 1, "b": 3, "c": 4}
    with pytest.raises(AssertionError):
        merge_dict(dict(a=1), [("b", 2)])

    class TwoHeads(nn.Module):
        def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
            return merge_dict({"a": x * 2}, {"b": x + 1})

    out = torch.fx.symbolic_trace(TwoHeads())(torch.ones(1))
    assert out["a"].item() == 2 and out["b"].item() == 2


def test_detect_anomalous_params_names_the_unused_parameters(current_log):
    model = nn.ModuleDict(
        dict(used=nn.Linear(2, 1), unused=nn.Linear(2, 1), frozen=nn.Linear(2, 1))
    )
    model["frozen"].requires_grad_(False)
    loss = model["used"](torch.ones(1, 2)).sum()
    detect_anomalous_params(loss, model)
    errors = [r.getMessage() for r in current_log if r.levelno == logging.ERROR]
    assert len(errors) == 2
    assert errors[0].startswith("unused.weight with shape torch.Size([1, 2]) is not in the")
    assert errors[1].startswith("unused.bias")


def _sync_model() -> nn.Module:
    model = nn.Sequential(
        nn.Conv2d(3, 4, 1), nn.SyncBatchNorm(4), nn.Sequential(nn.SyncBatchNorm(4))
    )
    with torch.no_grad():
        model[1].weight.fill_(2.0)
        model[1].running_mean.fill_(0.5)
    return model


def test_revert_sync_batchnorm_shares_state_and_runs_on_cpu():
    model = _sync_model().eval()
    weight, mean = model[1].weight, model[1].running_mean
    reverted = revert_sync_batchnorm(model)
    assert type(reverted[1]) is BatchNormXd and type(reverted[2][0]) is BatchNormXd
    assert reverted[1].weight is weight and reverted[1].running_mean is mean
    assert not reverted[1].training
    assert reverted(torch.ones(2, 3, 4, 4)).shape == (2, 4, 4, 4)
    norm = revert_sync_batchnorm(nn.SyncBatchNorm(4))
    assert isinstance(norm, BatchNormXd)
    assert norm(torch.ones(2, 4)).shape == (2, 4)  # any input rank
    assert norm(torch.ones(2, 4, 3, 3, 3)).shape == (2, 4, 3, 3, 3)


def test_convert_sync_batchnorm_replaces_every_batchnorm():
    model = nn.Sequential(nn.BatchNorm2d(3), nn.Sequential(nn.BatchNorm1d(3)), nn.ReLU())
    weight = model[0].weight
    converted = convert_sync_batchnorm(model)
    assert type(converted[0]) is nn.SyncBatchNorm and type(converted[1][0]) is nn.SyncBatchNorm
    assert converted[0].weight is weight and isinstance(converted[2], nn.ReLU)
    again = revert_sync_batchnorm(converted)
    assert type(again[0]) is BatchNormXd and again[0].weight is weight
    with pytest.raises(ValueError, match='"torch" or "mmcv"'):
        convert_sync_batchnorm(nn.BatchNorm2d(3), implementation="apex")


def test_a_child_registry_knows_only_its_own_wrappers() -> None:
    from cadence.model import is_model_wrapper
    from cadence.registry import MODEL_WRAPPERS, Registry

    child = Registry("child_wrappers", parent=MODEL_WRAPPERS)

    @child.register_module()
    class Mine(nn.Module):
        def __init__(self, module: nn.Module) -> None:
            super().__init__()
            self.module = module

    torch_wrapped = nn.DataParallel(nn.Linear(1, 1))
    assert is_model_wrapper(torch_wrapped)  # the root registry knows torch's wrappers
    assert not is_model_wrapper(torch_wrapped, registry=child)  # as in mmengine
    assert is_model_wrapper(Mine(nn.Linear(1, 1)), registry=child)
    assert is_model_wrapper(Mine(nn.Linear(1, 1)))  # the root sees its children's
