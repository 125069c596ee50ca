"""Optimization: torch optimizers by name; wrappers and schedulers arrive with the runner."""

from .torch_registry import register_torch_lr_schedulers, register_torch_optimizers

__all__ = ["register_torch_lr_schedulers", "register_torch_optimizers"]
