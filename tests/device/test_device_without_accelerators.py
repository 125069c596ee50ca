"""mmengine's helpers for the rarer accelerators on a machine that has none of them (the CI
machines): they answer 'no' or refuse with a RuntimeError naming the missing backend."""

from __future__ import annotations

import pytest
import torch

from cadence.device import get_max_musa_memory, is_npu_available, is_npu_support_full_precision


def test_no_npu_means_no_full_precision_npu() -> None:
    assert not is_npu_available()  # torch_npu is not installed here
    assert is_npu_support_full_precision() is False


def test_max_musa_memory_without_torch_musa_is_a_runtime_error() -> None:
    assert not hasattr(torch, "musa")  # torch_musa is not installed here
    with pytest.raises(RuntimeError, match="MUSA is not available"):
        get_max_musa_memory()
