"""Which accelerator this process can use (mmengine.device's public names)."""

from .utils import (
    get_device,
    get_max_cuda_memory,
    get_max_musa_memory,
    is_cuda_available,
    is_dipu_available,
    is_mlu_available,
    is_mps_available,
    is_musa_available,
    is_npu_available,
    is_npu_support_full_precision,
)

__all__ = [
    "get_device", "get_max_cuda_memory", "get_max_musa_memory", "is_cuda_available",
    "is_dipu_available", "is_mlu_available", "is_mps_available", "is_musa_available",
    "is_npu_available", "is_npu_support_full_precision",
]  # fmt: skip
