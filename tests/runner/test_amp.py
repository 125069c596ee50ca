"""autocast: the device's defaults, and an unknown device named as mmengine names it."""

import pytest
import torch

import cadence.runner.amp as amp
from cadence.runner import autocast


def test_cpu_autocast_defaults_to_bfloat16():
    with autocast(device_type="cpu"):
        assert torch.nn.Linear(2, 2)(torch.ones(1, 2)).dtype == torch.bfloat16


def test_an_unsupported_device_is_refused_unless_disabled(monkeypatch):
    monkeypatch.setattr(amp, "get_device", lambda: "mps")
    with autocast(enabled=False):
        assert torch.nn.Linear(2, 2)(torch.ones(1, 2)).dtype == torch.float32
    # mmengine's phrase (its tests match it), then which device and what is supported
    with pytest.raises(ValueError, match="User specified autocast device_type.*'mps'"):
        with autocast():
            pass
