"""Deep-learning helpers that need torch (mmengine.utils.dl_utils' public names)."""

from .collect_env import collect_env
from .misc import (
    TORCH_VERSION,
    has_batch_norm,
    is_jit_tracing,
    is_norm,
    load_url,
    mmcv_full_available,
    tensor2imgs,
    torch_meshgrid,
)
from .setup_env import set_multi_processing
from .time_counter import TimeCounter

__all__ = [
    "TORCH_VERSION", "TimeCounter", "collect_env", "has_batch_norm", "is_jit_tracing", "is_norm",
    "load_url", "mmcv_full_available", "set_multi_processing", "tensor2imgs", "torch_meshgrid",
]  # fmt: skip
