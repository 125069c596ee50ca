"""Strategies: device placement, wrapping, precision and checkpoint I/O."""

from .base import BaseStrategy, scale_lr
from .ddp import CadenceDistributedDataParallel, DDPStrategy
from .deepspeed import DeepSpeedOptimWrapper, DeepSpeedStrategy
from .env import apply_env_cfg, set_random_seed
from .fsdp import FSDPStrategy
from .launch import infer_launcher, init_process_group, process_info
from .single_device import SingleDeviceStrategy

__all__ = [
    "BaseStrategy", "CadenceDistributedDataParallel", "DDPStrategy", "DeepSpeedOptimWrapper",
    "DeepSpeedStrategy", "FSDPStrategy",
    "SingleDeviceStrategy",
    "apply_env_cfg", "infer_launcher", "init_process_group", "process_info", "scale_lr",
    "set_random_seed",
]  # fmt: skip
