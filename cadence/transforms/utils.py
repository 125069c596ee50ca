"""The randomness helpers at mmcv's path ``mmcv.transforms.utils``, where transforms import them."""

from .randomness import avoid_cache_randomness, cache_random_params, cache_randomness

__all__ = ["avoid_cache_randomness", "cache_random_params", "cache_randomness"]
