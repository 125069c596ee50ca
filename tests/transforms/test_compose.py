"""BaseTransform and Compose: order, None short-circuit, building from TRANSFORMS, repr."""

from __future__ import annotations

import pytest

from cadence.dataset import Compose as DatasetCompose
from cadence.registry import TRANSFORMS
from cadence.transforms import BaseTransform, Compose


class AddOne(BaseTransform):
    def __init__(self, key: str = "x") -> None:
        self.key = key

    def transform(self, results: dict) -> dict:
        results[self.key] = results[self.key] + 1
        return results

    def __repr__(self) -> str:
        return f"AddOne(key={self.key})"


class Drop(BaseTransform):
    def transform(self, results: dict) -> None:
        return None


def test_base_transform_is_abstract_and_call_runs_transform():
    with pytest.raises(TypeError):
        BaseTransform()  # type: ignore[abstract]
    assert AddOne()({"x": 1}) == {"x": 2}


def test_compose_is_the_same_class_under_both_paths_and_registered():
    assert DatasetCompose is Compose
    assert TRANSFORMS.get("Compose") is Compose


def test_compose_applies_in_order_and_builds_configs():
    TRANSFORMS.register_module(module=AddOne)
    double = lambda r: {**r, "x": r["x"] * 2}  # noqa: E731
    pipeline = Compose([dict(type="AddOne"), double, AddOne()])
    assert pipeline({"x": 1}) == {"x": 5}  # (1 + 1) * 2 + 1
    assert [type(t).__name__ for t in pipeline] == ["AddOne", "function", "AddOne"]


def test_compose_stops_at_none():
    seen = []
    pipeline = Compose([Drop(), lambda r: seen.append(r) or r])
    assert pipeline({"x": 1}) is None
    assert seen == []


def test_compose_accepts_none_and_a_single_transform():
    assert Compose(None)({"x": 3}) == {"x": 3}
    assert Compose(AddOne())({"x": 3}) == {"x": 4}
    TRANSFORMS.register_module(module=AddOne)
    assert Compose(dict(type="AddOne"))({"x": 3}) == {"x": 4}


def test_compose_rejects_what_is_not_a_transform():
    with pytest.raises(TypeError, match="callable or a config dict"):
        Compose([3])
    TRANSFORMS.register_module(name="NotCallable", module=lambda: 5)
    with pytest.raises(TypeError, match="not callable"):
        Compose([dict(type="NotCallable")])


def test_compose_nests_in_a_config():
    TRANSFORMS.register_module(module=AddOne)
    pipeline = Compose(
        [dict(type="Compose", transforms=[dict(type="AddOne"), dict(type="AddOne")])]
    )
    assert pipeline({"x": 0}) == {"x": 2}


def test_compose_repr_lists_one_transform_per_line():
    assert repr(Compose([AddOne("a"), AddOne("b")])) == (
        "Compose(\n    AddOne(key=a)\n    AddOne(key=b)\n)"
    )


def test_mmcv_base_layer_names_exist():
    import cadence.transforms as transforms

    for name in ("BaseTransform", "Compose", "KeyMapper", "RandomChoice", "RandomApply",
                 "TransformBroadcaster", "cache_randomness", "cache_random_params",
                 "avoid_cache_randomness"):  # fmt: skip
        assert name in transforms.__all__, name
