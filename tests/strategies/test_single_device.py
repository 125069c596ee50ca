"""SingleDeviceStrategy: the model is placed as it is, SyncBatchNorm reverted (one process)."""

import torch
from torch import nn

from cadence.strategies import SingleDeviceStrategy


def test_syncbn_layers_become_batchnorm_with_the_same_parameters():
    model = nn.Sequential(nn.Conv2d(3, 4, 1), nn.SyncBatchNorm(4))
    weight = model[1].weight
    placed = SingleDeviceStrategy(device="cpu").setup_module(model)
    assert not isinstance(placed[1], nn.SyncBatchNorm)
    assert isinstance(placed[1], nn.modules.batchnorm._BatchNorm)
    assert placed[1].weight is weight
    placed(torch.randn(2, 3, 4, 4)).sum().backward()  # trains in one process
