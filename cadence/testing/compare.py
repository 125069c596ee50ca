"""Comparison helpers for tests (mmengine.testing's ``assert_*`` functions).

As in mmengine, ``assert_allclose`` and ``assert_tensor_equal`` raise on a
mismatch, while the dict, attribute, key and layer helpers *return a bool*
for the test to assert.
"""

from __future__ import annotations

import runpy
import shlex
import sys
from collections.abc import Iterable, Mapping
from typing import Any
from unittest import mock

import numpy as np
import torch
import torch.nn as nn
from torch.nn.modules.batchnorm import _BatchNorm
from torch.nn.modules.instancenorm import _InstanceNorm


def assert_allclose(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    equal_nan: bool = True,
    msg: str | None = None,
) -> None:
    """Raise ``AssertionError`` unless the two are close (``torch.testing.assert_close``).

    As mmengine's (torch's former ``assert_allclose``): numbers, sequences and numpy
    arrays are read as tensors, and ``expected`` is compared in ``actual``'s dtype, so
    ``assert_allclose(torch.tensor(0.0), 0)`` holds.
    """
    kwargs: dict[str, Any] = {"rtol": rtol, "atol": atol, "equal_nan": equal_nan}
    if msg:
        kwargs["msg"] = msg
    actual = actual if isinstance(actual, torch.Tensor) else torch.as_tensor(actual)
    expected = expected if isinstance(expected, torch.Tensor) else torch.as_tensor(expected)
    expected = expected.to(device=actual.device, dtype=actual.dtype)
    torch.testing.assert_close(actual, expected, **kwargs)


def assert_tensor_equal(tensor_a: torch.Tensor, tensor_b: torch.Tensor) -> None:
    """Raise ``AssertionError`` unless both tensors have the same shape and values."""
    if not torch.equal(tensor_a, tensor_b):
        raise AssertionError(f"tensors differ:\n{tensor_a}\n{tensor_b}")


def _equal(a: Any, b: Any) -> bool:
    """Value equality that also works for tensors and arrays (same shape, same values)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        try:
            return bool(torch.equal(torch.as_tensor(a), torch.as_tensor(b)))
        except (TypeError, RuntimeError, ValueError):
            return False
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    result = a == b
    return bool(result.all()) if hasattr(result, "all") else bool(result)


def assert_dict_contains_subset(
    dict_obj: Mapping[Any, Any], expected_subset: Mapping[Any, Any]
) -> bool:
    """Whether every key of ``expected_subset`` is in ``dict_obj`` with an equal value."""
    return all(
        key in dict_obj and _equal(dict_obj[key], value) for key, value in expected_subset.items()
    )


def assert_attrs_equal(obj: Any, expected_attrs: Mapping[str, Any]) -> bool:
    """Whether ``obj`` has every attribute of ``expected_attrs`` with an equal value."""
    return all(hasattr(obj, name) and _equal(getattr(obj, name), value)
               for name, value in expected_attrs.items())  # fmt: skip


def assert_dict_has_keys(obj: Mapping[Any, Any], expected_keys: Iterable[Any]) -> bool:
    """Whether ``obj`` has all of ``expected_keys``."""
    return set(expected_keys) <= set(obj.keys())


def assert_keys_equal(result_keys: Iterable[Any], target_keys: Iterable[Any]) -> bool:
    """Whether the two collections hold the same keys (order ignored)."""
    return set(result_keys) == set(target_keys)


def assert_is_norm_layer(module: nn.Module) -> bool:
    """Whether ``module`` is a batch, instance, group or layer norm."""
    return isinstance(module, _BatchNorm | _InstanceNorm | nn.GroupNorm | nn.LayerNorm)


def assert_params_all_zeros(module: nn.Module) -> bool:
    """Whether ``module.weight`` (and ``module.bias`` when it has one) are all zero."""
    weight = module.weight
    if not isinstance(weight, torch.Tensor):
        raise TypeError(f"{type(module).__name__} has no weight tensor")
    zero = bool(torch.all(weight.detach() == 0))
    bias = getattr(module, "bias", None)
    if isinstance(bias, torch.Tensor):
        zero = zero and bool(torch.all(bias.detach() == 0))
    return zero


def check_python_script(cmd: str) -> None:
    """Run a ``python script.py args...`` command line in this process, as ``__main__``."""
    args = shlex.split(cmd)
    if args and args[0] == "python":
        args = args[1:]
    with mock.patch.object(sys, "argv", args):
        runpy.run_path(args[0], run_name="__main__")
