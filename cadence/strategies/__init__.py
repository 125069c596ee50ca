"""Strategies: device placement, wrapping, precision and checkpoint I/O."""

from __future__ import annotations

from ..utils.lazy import lazy_exports

#: name -> the module that defines it, imported when the name is first read.
LAZY_EXPORTS: dict[str, str] = {
    "BaseStrategy": ".base",
    "scale_lr": ".base",
    "CadenceDistributedDataParallel": ".ddp",
    "DDPStrategy": ".ddp",
    "DeepSpeedOptimWrapper": ".deepspeed",
    "DeepSpeedStrategy": ".deepspeed",
    "apply_env_cfg": ".env",
    "set_random_seed": ".env",
    "FSDPStrategy": ".fsdp",
    "infer_launcher": ".launch",
    "init_process_group": ".launch",
    "process_info": ".launch",
    "SingleDeviceStrategy": ".single_device",
}

__all__ = [
    "BaseStrategy", "CadenceDistributedDataParallel", "DDPStrategy", "DeepSpeedOptimWrapper",
    "DeepSpeedStrategy", "FSDPStrategy",
    "SingleDeviceStrategy",
    "apply_env_cfg", "infer_launcher", "init_process_group", "process_info", "scale_lr",
    "set_random_seed",
]  # fmt: skip
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
