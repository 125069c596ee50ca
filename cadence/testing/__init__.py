"""Test helpers for code built on cadence (mmengine.testing's public names).

Importing this package imports torch and the runner; it is meant for test suites.
"""

from ._internal import MultiProcessTestCase
from .compare import (
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
from .runner_test_case import RunnerTestCase, ToyDataset, ToyMetric, ToyModel

__all__ = [
    "MultiProcessTestCase", "RunnerTestCase", "ToyDataset", "ToyMetric", "ToyModel",
    "assert_allclose", "assert_attrs_equal", "assert_dict_contains_subset", "assert_dict_has_keys",
    "assert_is_norm_layer", "assert_keys_equal", "assert_params_all_zeros", "assert_tensor_equal",
    "check_python_script",
]  # fmt: skip
