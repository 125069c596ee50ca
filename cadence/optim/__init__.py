"""Optimization: optimizer wrappers, constructors and parameter schedulers."""

from .optimizer import *  # noqa: F403
from .optimizer import __all__ as _optimizer_all
from .scheduler import *  # noqa: F403
from .scheduler import __all__ as _scheduler_all

__all__ = [*_optimizer_all, *_scheduler_all]
