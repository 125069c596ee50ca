"""mmengine.testing's comparison helpers: assert_* raise; the other checks return bools."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn as nn

from cadence.testing import (
    assert_allclose,
    assert_attrs_equal,
    assert_dict_contains_subset,
    assert_dict_has_keys,
    assert_is_norm_layer,
    assert_keys_equal,
    assert_params_all_zeros,
    assert_tensor_equal,
    check_python_script,
)


def test_assert_allclose_and_tensor_equal_raise_on_mismatch():
    assert_allclose(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]))
    assert_allclose(np.array([1.0]), np.array([1.0]))
    with pytest.raises(AssertionError):
        assert_allclose(torch.tensor([1.0]), torch.tensor([1.1]))
    assert_allclose(torch.tensor([1.0]), torch.tensor([1.05]), rtol=0.1, atol=0.0)
    with pytest.raises(AssertionError, match="custom message"):
        assert_allclose(torch.tensor([1.0]), torch.tensor([2.0]), msg="custom message")
    assert_tensor_equal(torch.arange(3), torch.arange(3))
    with pytest.raises(AssertionError):
        assert_tensor_equal(torch.arange(3), torch.arange(1, 4))


def test_assert_allclose_reads_numbers_as_tensors_in_the_actual_dtype():
    assert_allclose(torch.tensor(0.0), 0)  # a float tensor and an int, as mmengine's
    assert_allclose(3, torch.tensor(3.0))
    assert_allclose(torch.tensor([1.0, 2.0]), [1, 2])
    with pytest.raises(AssertionError):
        assert_allclose(torch.tensor(0.0), 1)


def test_dict_and_attribute_checks_return_bools():
    data = {"a": 1, "b": torch.tensor([1, 2]), "c": np.array([3.0]), "d": "x"}
    assert assert_dict_contains_subset(data, {"a": 1, "b": torch.tensor([1, 2])}) is True
    assert assert_dict_contains_subset(data, {"c": np.array([3.0]), "d": "x"}) is True
    assert assert_dict_contains_subset(data, {"b": torch.tensor([1, 3])}) is False
    assert assert_dict_contains_subset(data, {"b": torch.tensor([1, 2, 3])}) is False  # shape
    assert assert_dict_contains_subset(data, {"missing": 1}) is False
    obj = nn.Linear(2, 3)
    assert assert_attrs_equal(obj, {"in_features": 2, "out_features": 3}) is True
    assert assert_attrs_equal(obj, {"in_features": 3}) is False
    assert assert_attrs_equal(obj, {"nope": 1}) is False
    assert assert_dict_has_keys({"a": 1, "b": 2}, ["a"])
    assert not assert_dict_has_keys({"a": 1}, ["b"])
    assert assert_keys_equal(["a", "b"], ["b", "a"]) and not assert_keys_equal(["a"], ["a", "b"])


def test_layer_checks():
    assert assert_is_norm_layer(nn.BatchNorm2d(2)) and assert_is_norm_layer(nn.GroupNorm(1, 2))
    assert not assert_is_norm_layer(nn.Conv2d(1, 1, 1))
    conv = nn.Conv2d(1, 1, 1)
    nn.init.zeros_(conv.weight)
    nn.init.zeros_(conv.bias)
    assert assert_params_all_zeros(conv)
    nn.init.ones_(conv.bias)
    assert not assert_params_all_zeros(conv)
    no_bias = nn.Linear(2, 2, bias=False)
    nn.init.zeros_(no_bias.weight)
    assert assert_params_all_zeros(no_bias)


def test_check_python_script_runs_it_as_main_with_argv(tmp_path):
    out = tmp_path / "out.txt"
    script = tmp_path / "script.py"
    script.write_text(
        "import sys\nif __name__ == '__main__':\n    open(sys.argv[2], 'w').write(sys.argv[1])\n"
    )
    check_python_script(f"python {script} hello {out}")
    assert out.read_text() == "hello"
