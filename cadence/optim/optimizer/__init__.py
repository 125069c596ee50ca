"""Optimizer wrappers, their constructor, and torch's optimizers by name."""

from .torch_registry import register_torch_lr_schedulers, register_torch_optimizers

__all__ = ["register_torch_lr_schedulers", "register_torch_optimizers"]
