"""Model wrappers: ``is_model_wrapper``. DDPStrategy's wrapper and the one-DDP-per-sub-model
wrapper are in :mod:`.distributed` and :mod:`.separate_distributed` (also importable from
``cadence.model``); the other strategies' wrappers live with them in ``cadence.strategies``."""

from .utils import is_model_wrapper

__all__ = ["is_model_wrapper"]
