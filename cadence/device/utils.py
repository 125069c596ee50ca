"""Accelerator availability checks and the default device name.

Vendor plug-ins (``torch_npu``, ``torch_mlu``, ``torch_dipu``, ``torch_musa``)
are imported only by the check that needs them.
"""

from __future__ import annotations

import functools
import importlib

import torch


def _has_plugin(module: str) -> bool:
    try:
        importlib.import_module(module)
    except Exception:  # a broken vendor plug-in means: not available
        return False
    return True


def is_cuda_available() -> bool:
    """Whether a CUDA (or ROCm) GPU is usable."""
    return bool(torch.cuda.is_available())


def is_npu_available() -> bool:
    """Whether an Ascend NPU is usable (needs ``torch_npu``)."""
    if not _has_plugin("torch_npu"):
        return False
    npu = getattr(torch, "npu", None)
    return bool(npu is not None and npu.is_available())


def is_mlu_available() -> bool:
    """Whether a Cambricon MLU is usable."""
    check = getattr(torch, "is_mlu_available", None)
    return bool(check is not None and check())


def is_mps_available() -> bool:
    """Whether Apple's Metal (MPS) backend is usable."""
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def is_dipu_available() -> bool:
    """Whether DIPU (``torch_dipu``) is installed."""
    return _has_plugin("torch_dipu")


def is_musa_available() -> bool:
    """Whether a Moore Threads MUSA GPU is usable (needs ``torch_musa``)."""
    if not _has_plugin("torch_musa"):
        return False
    musa = getattr(torch, "musa", None)
    return bool(musa is not None and musa.is_available())


def is_npu_support_full_precision() -> bool:
    """Whether the NPU runs float32 matmuls at full precision (Ascend 910B and later)."""
    if not is_npu_available():
        return False
    version = str(getattr(torch.npu, "get_soc_version", lambda: -1)())  # type: ignore[attr-defined]
    return version.isdigit() and int(version) >= 220


@functools.lru_cache(maxsize=1)
def get_device() -> str:
    """The device type this process trains on by default.

    The first available of ``'npu'``, ``'cuda'``, ``'mlu'``, ``'mps'``,
    ``'dipu'``, ``'musa'``, else ``'cpu'`` (mmengine's order). Checked once per process.
    """
    checks = (
        ("npu", is_npu_available),
        ("cuda", is_cuda_available),
        ("mlu", is_mlu_available),
        ("mps", is_mps_available),
        ("dipu", is_dipu_available),
        ("musa", is_musa_available),
    )
    return next((name for name, check in checks if check()), "cpu")


def get_max_cuda_memory(device: torch.device | int | str | None = None) -> int:
    """Peak CUDA memory allocated on ``device`` since the last call, in MiB; resets the peak.

    Raises ``RuntimeError`` when CUDA is not available.
    """
    if not is_cuda_available():
        raise RuntimeError("get_max_cuda_memory needs CUDA, which is not available")
    peak = torch.cuda.max_memory_allocated(device=device)
    torch.cuda.reset_peak_memory_stats(device=device)
    return int(peak) // (1024 * 1024)


def get_max_musa_memory(device: torch.device | int | str | None = None) -> int:
    """Peak MUSA memory allocated on ``device`` since the last call, in MiB; resets the peak."""
    musa = getattr(torch, "musa", None)
    if musa is None:
        raise RuntimeError("MUSA is not available: torch_musa is not installed")
    peak = musa.max_memory_allocated(device=device)
    musa.reset_peak_memory_stats(device=device)
    return int(peak) // (1024 * 1024)
