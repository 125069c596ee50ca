"""Strategies: device placement, wrapping, precision and checkpoint I/O."""

from .base import BaseStrategy, scale_lr
from .env import apply_env_cfg, set_random_seed
from .single_device import SingleDeviceStrategy

__all__ = ["BaseStrategy", "SingleDeviceStrategy", "apply_env_cfg", "scale_lr", "set_random_seed"]
