"""Data transforms: ``BaseTransform``, ``Compose`` and the generic wrappers (mmcv's base layer)."""

from .base import BaseTransform
from .compose import Compose, build_transform
from .randomness import avoid_cache_randomness, cache_random_params, cache_randomness
from .test_time_aug import TestTimeAug
from .wrappers import IgnoreKey, KeyMapper, RandomApply, RandomChoice, TransformBroadcaster

__all__ = [
    "BaseTransform", "Compose", "IgnoreKey", "KeyMapper", "RandomApply", "RandomChoice",
    "TestTimeAug", "TransformBroadcaster", "avoid_cache_randomness", "build_transform",
    "cache_random_params", "cache_randomness",
]  # fmt: skip
