"""cadence.visualization.utils: the helpers task visualizers import from mmengine's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cadence.visualization.utils import (
    check_length,
    check_type,
    check_type_and_length,
    color_str2rgb,
    color_val_matplotlib,
    convert_overlay_heatmap,
    tensor2ndarray,
    value2list,
)


def test_type_and_length_checks():
    check_type("x", 1, (int, float))
    with pytest.raises(TypeError, match="`x` should be"):
        check_type("x", "1", int)
    check_length("colors", ["r", "g"], 2)
    check_length("colors", "r", 5)  # only lists are counted
    with pytest.raises(AssertionError, match="The length of colors"):
        check_type_and_length("colors", ["r"], (str, list), 2)


def test_values_and_colours():
    assert value2list("r", str, 3) == ["r", "r", "r"]
    assert value2list(["r", "g"], str, 3) == ["r", "g"]
    assert color_val_matplotlib("red") == "red"
    assert color_val_matplotlib((255, 0, 51)) == (1.0, 0.0, 0.2)
    assert color_val_matplotlib(["b", (0, 255, 0)]) == ["b", (0.0, 1.0, 0.0)]
    with pytest.raises(AssertionError):
        color_val_matplotlib((256, 0, 0))
    assert color_str2rgb("r") == (255, 0, 0)
    assert color_str2rgb("#00ff00") == (0, 255, 0)
    array = tensor2ndarray(torch.ones(2))
    assert isinstance(array, np.ndarray) and array.tolist() == [1.0, 1.0]


def test_heatmap_of_a_constant_map_is_jet_bottom():
    assert convert_overlay_heatmap(np.zeros((2, 2)))[0, 0].tolist() == [0, 0, 128]
    with pytest.raises(AssertionError):
        convert_overlay_heatmap(np.zeros((2, 2, 2)))
