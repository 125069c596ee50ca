"""cadence.device: availability checks agree with torch; get_device picks the accelerator."""

from __future__ import annotations

import pytest
import torch

from cadence.device import (
    get_device,
    get_max_cuda_memory,
    is_cuda_available,
    is_dipu_available,
    is_mlu_available,
    is_mps_available,
    is_musa_available,
    is_npu_available,
)


def test_checks_agree_with_torch():
    assert is_cuda_available() == torch.cuda.is_available()
    assert is_mps_available() == torch.backends.mps.is_available()
    for check in (is_npu_available, is_mlu_available, is_dipu_available, is_musa_available):
        assert isinstance(check(), bool)


def test_get_device_names_the_accelerator_or_cpu():
    expected = (
        "cuda"
        if torch.cuda.is_available()
        else "mps"
        if torch.backends.mps.is_available()
        else "cpu"
    )
    if is_npu_available():
        expected = "npu"
    assert get_device() == expected
    torch.zeros(1, device=get_device())  # a usable device string


def test_get_max_cuda_memory_reports_mib_and_resets_the_peak():
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="needs CUDA"):
            get_max_cuda_memory()
        return
    block = torch.empty(8 * 1024 * 1024, dtype=torch.uint8, device="cuda")  # 8 MiB
    assert get_max_cuda_memory() >= 8
    del block
    torch.cuda.synchronize()
    assert get_max_cuda_memory() < 8
