"""pseudo_collate / default_collate, checked against torch's default_collate."""

from __future__ import annotations

from collections import OrderedDict, namedtuple

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.utils.data import default_collate as torch_default_collate

from cadence.dataset import default_collate, pseudo_collate

Pair = namedtuple("Pair", ["image", "label"])


class DataSample:
    """Stands in for a data sample object that is neither tensor nor sequence."""

    def __init__(self, tag: str) -> None:
        self.tag = tag


def assert_same(actual, expected) -> None:
    """Recursive equality that also checks container types and tensor dtypes."""
    assert type(actual) is type(expected), (type(actual), type(expected))
    if isinstance(expected, torch.Tensor):
        assert actual.dtype == expected.dtype
        assert actual.shape == expected.shape
        assert torch.equal(actual, expected)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert_same(actual[key], expected[key])
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    else:
        assert actual == expected


# -------------------------------------------------------------- pseudo_collate
def test_pseudo_collate_dicts_keeps_leaves_as_lists() -> None:
    t1, t2 = torch.zeros(2), torch.ones(3)  # unequal shapes are fine: nothing is stacked
    batch = [dict(inputs=t1, label=1, name="a"), dict(inputs=t2, label=2, name="b")]
    out = pseudo_collate(batch)
    assert type(out) is dict
    assert list(out) == ["inputs", "label", "name"]
    assert out["inputs"][0] is t1 and out["inputs"][1] is t2
    assert out["label"] == [1, 2]
    assert out["name"] == ["a", "b"]


def test_pseudo_collate_keeps_the_mapping_type() -> None:
    batch = [OrderedDict(b=1, a=2), OrderedDict(b=3, a=4)]
    out = pseudo_collate(batch)
    assert type(out) is OrderedDict
    assert list(out.items()) == [("b", [1, 3]), ("a", [2, 4])]


def test_pseudo_collate_tuples_become_lists_of_fields() -> None:
    out = pseudo_collate([(1, "x"), (2, "y"), (3, "z")])
    assert out == [[1, 2, 3], ["x", "y", "z"]]
    assert type(out) is list


def test_pseudo_collate_lists_are_transposed() -> None:
    out = pseudo_collate([[1, 2], [3, 4], [5, 6]])
    assert out == [[1, 3, 5], [2, 4, 6]]


def test_pseudo_collate_namedtuples_keep_their_type() -> None:
    arrays = [np.arange(3), np.arange(4)]
    out = pseudo_collate([Pair(arrays[0], 0), Pair(arrays[1], 1)])
    assert type(out) is Pair
    assert out.label == [0, 1]
    assert out.image[0] is arrays[0] and out.image[1] is arrays[1]


def test_pseudo_collate_leaves() -> None:
    tensors = [torch.zeros(2), torch.ones(2)]
    arrays = [np.zeros(2), np.ones(2)]
    samples = [DataSample("a"), DataSample("b")]
    assert pseudo_collate(["a", "bc"]) == ["a", "bc"]
    assert pseudo_collate([b"a", b"b"]) == [b"a", b"b"]
    assert pseudo_collate([1.5, 2.5]) == [1.5, 2.5]
    out = pseudo_collate(tensors)
    assert type(out) is list and all(o is t for o, t in zip(out, tensors))
    out = pseudo_collate(arrays)
    assert type(out) is list and all(o is a for o, a in zip(out, arrays))
    out = pseudo_collate(samples)
    assert [s.tag for s in out] == ["a", "b"]


def test_pseudo_collate_nested_structures() -> None:
    batch = [dict(meta=dict(id=1, tags=["a", "b"])), dict(meta=dict(id=2, tags=["c", "d"]))]
    out = pseudo_collate(batch)
    assert out == dict(meta=dict(id=[1, 2], tags=[["a", "c"], ["b", "d"]]))


@pytest.mark.parametrize("collate", [pseudo_collate, default_collate])
@pytest.mark.parametrize(
    "batch",
    [
        [[1, 2], [3]],
        [(1, 2), (3, 4, 5)],
        [dict(x=[1, 2]), dict(x=[1])],
    ],
    ids=["lists", "tuples", "nested"],
)
def test_unequal_lengths_raise(collate, batch) -> None:
    with pytest.raises((ValueError, RuntimeError)):
        collate(batch)


# ------------------------------------------------------------- default_collate
def test_default_collate_stacks_tensors() -> None:
    tensors = [torch.randn(2, 3) for _ in range(4)]
    out = default_collate(tensors)
    assert_same(out, torch.stack(tensors))


def test_default_collate_converts_numpy_arrays() -> None:
    arrays = [np.arange(6, dtype=np.float32).reshape(2, 3) + i for i in range(3)]
    out = default_collate(arrays)
    assert_same(out, torch.from_numpy(np.stack(arrays)))


def test_default_collate_dicts_of_tensors_and_strings() -> None:
    batch = [dict(x=torch.full((2,), float(i)), name=f"s{i}") for i in range(3)]
    out = default_collate(batch)
    assert type(out) is dict
    assert_same(out["x"], torch.stack([b["x"] for b in batch]))
    assert out["name"] == ["s0", "s1", "s2"]


def test_default_collate_namedtuples_and_tuples() -> None:
    images = [torch.ones(2) * i for i in range(3)]
    out = default_collate([Pair(img, i) for i, img in enumerate(images)])
    assert type(out) is Pair
    assert_same(out.image, torch.stack(images))
    assert_same(out.label, torch.tensor([0, 1, 2]))

    out = default_collate([(img, i) for i, img in enumerate(images)])
    assert type(out) is list
    assert_same(out[0], torch.stack(images))


def test_default_collate_keeps_other_objects_as_lists() -> None:
    samples = [DataSample("a"), DataSample("b")]
    out = default_collate(samples)
    assert [s.tag for s in out] == ["a", "b"]
    assert default_collate(["x", "y"]) == ["x", "y"]


def test_default_collate_tensors_of_different_shapes_raise() -> None:
    with pytest.raises(RuntimeError):
        default_collate([torch.zeros(2), torch.zeros(3)])


@pytest.mark.parametrize(
    "batch",
    [
        [1, 2, 3],
        [1.5, 2.5],
        [True, False],
        [np.float32(1.5), np.float32(2.0)],
        [np.int64(3), np.int64(4)],
        [np.float64(0.25), np.float64(1.0)],
        [torch.tensor(1.0), torch.tensor(2.0)],
        [np.array([1, 2]), np.array([3, 4])],
        [dict(a=1, b=2.5), dict(a=3, b=4.5)],
        [(1, 0.5), (2, 1.5)],
        [[1, 2], [3, 4]],
        [Pair(torch.zeros(2), 1), Pair(torch.ones(2), 0)],
    ],
    ids=[
        "ints", "floats", "bools", "np_float32", "np_int64", "np_float64", "0d_tensors",
        "arrays", "dicts", "tuples", "lists", "namedtuples",
    ],
)  # fmt: skip
def test_default_collate_matches_torch(batch) -> None:
    assert_same(default_collate(batch), torch_default_collate(batch))


@settings(max_examples=50, deadline=None)
@given(
    st.integers(min_value=1, max_value=5).flatmap(
        lambda width: st.lists(
            st.tuples(
                st.lists(st.integers(-1000, 1000), min_size=width, max_size=width),
                st.floats(-1e6, 1e6, allow_nan=False),
            ),
            min_size=1,
            max_size=6,
        )
    )
)
def test_default_collate_matches_torch_on_random_batches(batch) -> None:
    samples = [dict(values=values, weight=weight) for values, weight in batch]
    assert_same(default_collate(samples), torch_default_collate(samples))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries({"a": st.integers(), "b": st.text(max_size=3)}),
        min_size=1,
        max_size=6,
    )
)
def test_pseudo_collate_transposes_dicts(batch) -> None:
    out = pseudo_collate(batch)
    assert out == {"a": [d["a"] for d in batch], "b": [d["b"] for d in batch]}
