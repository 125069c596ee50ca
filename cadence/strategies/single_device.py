"""Training on one device: CPU or a single GPU."""

from __future__ import annotations

from ..registry import STRATEGIES
from .base import BaseStrategy


@STRATEGIES.register_module()
class SingleDeviceStrategy(BaseStrategy):
    """One process, one device (the first GPU when there is one, else the CPU)."""
