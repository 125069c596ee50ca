"""cadence.utils' type checks, casts, tuples and apply_to, as mmengine.utils documents them."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import pytest

import cadence.utils
from cadence.utils import (
    apply_to,
    concat_list,
    has_method,
    is_list_of,
    is_method_overridden,
    is_seq_of,
    is_str,
    is_tuple_of,
    iter_cast,
    list_cast,
    slice_list,
    to_1tuple,
    to_2tuple,
    to_4tuple,
    to_ntuple,
    tuple_cast,
)


def test_is_str_and_sequence_checks():
    assert is_str("a") and not is_str(b"a") and not is_str(1)
    assert is_seq_of(["a", "b"], str) and not is_seq_of(["a", 1], str)
    assert is_seq_of((1, 2.0), (int, float))
    assert not is_seq_of("not a list", int)  # a str is a sequence of str, not of int
    assert is_seq_of([1], int, seq_type=list) and not is_seq_of((1,), int, seq_type=list)
    assert is_list_of([1, 2], int) and not is_list_of((1, 2), int)
    assert is_tuple_of((1, 2), int) and not is_tuple_of([1, 2], int)
    assert is_list_of([], int)
    with pytest.raises(TypeError):
        is_seq_of([1], int, seq_type="list")  # type: ignore[arg-type]


def test_casts():
    it = iter_cast(["1", "2"], int)
    assert not isinstance(it, list) and list(it) == [1, 2]
    assert list_cast(["1", "2"], int) == [1, 2]
    assert tuple_cast([1, 2], str) == ("1", "2")
    with pytest.raises(TypeError):
        iter_cast(1, int)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        iter_cast([1], "int")  # type: ignore[arg-type]


def test_slice_and_concat():
    assert slice_list([1, 2, 3, 4, 5, 6], [1, 2, 3]) == [[1], [2, 3], [4, 5, 6]]
    assert slice_list([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]
    with pytest.raises(ValueError, match="6 != 5"):
        slice_list([1, 2, 3, 4, 5], [3, 3])
    with pytest.raises(TypeError):
        slice_list([1, 2], (1, 1))  # type: ignore[arg-type]
    assert concat_list([[1, 2], [3], []]) == [1, 2, 3]


def test_ntuple_repeats_scalars_and_passes_iterables():
    assert to_1tuple(3) == (3,)
    assert to_2tuple(3) == (3, 3)
    assert to_4tuple(0.5) == (0.5, 0.5, 0.5, 0.5)
    assert to_2tuple((1, 2)) == (1, 2)
    assert to_2tuple([1, 2, 3]) == [1, 2, 3]  # an iterable is returned as it is
    assert to_ntuple(3)("x") == "x"  # a str is iterable too


def test_apply_to_keeps_container_types():
    Point = namedtuple("Point", "x y")
    data = OrderedDict(a=[1, "s", (2, Point(3, "t"))], b=4.0)
    out = apply_to(data, lambda x: isinstance(x, int), lambda x: x * 10)
    assert type(out) is OrderedDict
    assert out == OrderedDict(a=[10, "s", (20, Point(30, "t"))], b=4.0)
    assert type(out["a"][2][1]) is Point
    assert apply_to(5, lambda x: False, lambda x: 0) == 5


class _Base:
    def run(self):
        return 1

    def other(self):
        return 2


class _Derived(_Base):
    def run(self):
        return 3


def test_method_checks():
    assert is_method_overridden("run", _Base, _Derived)
    assert is_method_overridden("run", _Base, _Derived())
    assert not is_method_overridden("other", _Base, _Derived)
    with pytest.raises(AssertionError) as info:  # mmengine asserted; cadence's is a TypeError too
        is_method_overridden("run", _Base(), _Derived)  # type: ignore[arg-type]
    assert isinstance(info.value, TypeError)
    obj = _Derived()
    obj.value = 3  # type: ignore[attr-defined]
    assert has_method(obj, "run") and not has_method(obj, "value") and not has_method(obj, "nope")


def test_misc_also_names_the_decorators_and_import_helpers_as_mmengine_utils_misc_does():
    from cadence.utils import misc

    for name in (
        "deprecated_api_warning",
        "deprecated_function",
        "get_object_from_string",
        "import_modules_from_strings",
        "requires_executable",
        "requires_package",
    ):
        assert getattr(misc, name) is getattr(cadence.utils, name)
