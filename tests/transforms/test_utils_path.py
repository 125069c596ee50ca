"""``cadence.transforms.utils``: the randomness helpers at mmcv's import path."""

from __future__ import annotations

import random
from typing import Any

from cadence.transforms import BaseTransform, cache_random_params
from cadence.transforms.utils import cache_randomness


class _Shift(BaseTransform):
    @cache_randomness
    def _offset(self) -> float:
        return random.random()

    def transform(self, results: dict[str, Any]) -> dict[str, Any]:
        results["x"] = results["x"] + self._offset()
        return results


def test_cache_randomness_from_the_mmcv_path_fixes_the_draw_inside_cache_random_params():
    shift = _Shift()
    with cache_random_params(shift):
        first = shift({"x": 0.0})["x"]
        second = shift({"x": 0.0})["x"]
    assert first == second  # one draw, reused while cached
    assert shift({"x": 0.0})["x"] != first  # fresh draws again outside
