"""Model wrappers (the wrapper classes live with their strategies in ``cadence.strategies``)."""

from .utils import is_model_wrapper

__all__ = ["is_model_wrapper"]
