# Copyright (c) toyproj authors. All rights reserved.
import numpy as np
from cadence.transforms import BaseTransform
from cadence.transforms.utils import cache_randomness

from toyproj.registry import TRANSFORMS


@TRANSFORMS.register_module()
class RandomJitter(BaseTransform):
    """Add Gaussian noise to the point.

    Required Keys:

    - point

    Modified Keys:

    - point

    Args:
        std (float): The standard deviation of the noise. Defaults to 0.05.
    """

    def __init__(self, std: float = 0.05) -> None:
        assert std >= 0, f'std must be non-negative, got {std}'
        self.std = std

    @cache_randomness
    def _random_offset(self) -> np.ndarray:
        return np.random.normal(0.0, self.std, size=2)

    def transform(self, results: dict) -> dict:
        point = np.asarray(results['point'], dtype=np.float32)
        results['point'] = (point + self._random_offset()).astype(np.float32)
        return results

    def __repr__(self) -> str:
        return f'{self.__class__.__name__}(std={self.std})'
