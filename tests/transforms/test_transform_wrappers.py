"""KeyMapper, TransformBroadcaster, RandomChoice, RandomApply (mmcv's documented semantics)."""

from __future__ import annotations

import numpy as np
import pytest

from cadence.registry import TRANSFORMS
from cadence.transforms import (
    BaseTransform,
    KeyMapper,
    RandomApply,
    RandomChoice,
    TransformBroadcaster,
    cache_randomness,
)


class AddToImg(BaseTransform):
    """Adds ``amount`` to 'img' and records what it saw in 'seen'."""

    def __init__(self, amount: int = 1) -> None:
        self.amount = amount

    def transform(self, results: dict) -> dict:
        results["seen"] = sorted(results)
        results["img"] = results["img"] + self.amount
        return results


class RandomShift(BaseTransform):
    @cache_randomness
    def shift(self) -> int:
        return int(np.random.randint(0, 1_000_000))

    def transform(self, results: dict) -> dict:
        results["img"] = results["img"] + self.shift()
        return results


class Tag(BaseTransform):
    def __init__(self, name: str) -> None:
        self.name = name

    def transform(self, results: dict) -> dict:
        results.setdefault("tags", []).append(self.name)
        return results


def test_all_wrappers_are_registered():
    for name in ("KeyMapper", "TransformBroadcaster", "RandomChoice", "RandomApply"):
        assert TRANSFORMS.get(name) is not None


def test_key_mapper_renames_in_and_back_out():
    mapper = KeyMapper(transforms=[AddToImg()], mapping={"img": "gt_img"})
    out = mapper({"gt_img": 1, "img": 100})
    # the inner 'img' is the outer 'gt_img'; the outer 'img' is untouched
    assert out["gt_img"] == 2 and out["img"] == 100
    assert "seen" not in out  # outputs that the remapping does not name are dropped
    assert mapper.auto_remap is True and mapper.remapping == {"img": "gt_img"}


def test_key_mapper_collects_lists_and_dicts():
    seen = {}

    def inner(results: dict) -> dict:
        seen.update(results)
        return results

    mapper = KeyMapper(
        transforms=[inner], mapping={"pair": ["a", "b"], "named": {"src": "a", "tar": "b"}}
    )
    mapper({"a": 1, "b": 2})
    assert seen["pair"] == [1, 2] and seen["named"] == {"src": 1, "tar": 2}


def test_key_mapper_ellipsis_hides_a_key_and_missing_keys():
    seen = {}

    def inner(results: dict) -> dict:
        seen.clear()
        seen.update(results)
        return results

    hidden = KeyMapper(transforms=[inner], mapping={"img": "gt_img", "mask": ...})
    out = hidden({"gt_img": 1, "mask": "m"})
    assert "mask" not in seen and out["mask"] == "m"
    strict = KeyMapper(transforms=[inner], mapping={"img": "absent"})
    strict({"x": 0})
    assert seen["img"] is None  # mmcv: a missing outer key reads as None
    lenient = KeyMapper(transforms=[inner], mapping={"img": "absent"}, allow_nonexist_keys=True)
    out = lenient({"x": 0})
    assert "img" not in seen and "absent" not in out


def test_key_mapper_explicit_remapping_keeps_only_named_outputs():
    def make(results: dict) -> dict:
        results["made"] = results["img"] * 10
        results["scratch"] = "tmp"
        return results

    mapper = KeyMapper(transforms=[make], mapping={"img": "a"}, remapping={"made": "b"})
    out = mapper({"a": 2})
    assert out == {"a": 2, "b": 20}
    with pytest.raises(ValueError, match="not both"):
        KeyMapper(mapping={"img": "a"}, remapping={"img": "a"}, auto_remap=True)


def test_key_mapper_without_mapping_passes_everything():
    out = KeyMapper(transforms=[AddToImg(5)])({"img": 1})
    assert out["img"] == 6


def test_key_mapper_wrapped_transforms_must_not_return_none():
    with pytest.raises(ValueError, match="returned None"):
        KeyMapper(transforms=[lambda r: None])({"img": 1})


def test_broadcaster_applies_to_each_mapped_key():
    out = TransformBroadcaster(transforms=[AddToImg(1)], mapping={"img": ["lq", "gt"]})(
        {"lq": 10, "gt": 20}
    )
    assert out["lq"] == 11 and out["gt"] == 21


def test_broadcaster_applies_to_each_element_of_a_list():
    out = TransformBroadcaster(transforms=[AddToImg(1)], mapping={"img": "imgs"})(
        {"imgs": [1, 2, 3]}
    )
    assert out["imgs"] == [2, 3, 4]


def test_broadcaster_ignored_slot_updates_a_key_once():
    def set_shape(results: dict) -> dict:
        results["shape"] = results["img"] * 100
        return results

    out = TransformBroadcaster(
        transforms=[set_shape], mapping={"img": ["lq", "gt"], "shape": ["shape", ...]}
    )({"lq": 1, "gt": 2, "shape": 0})
    assert out["shape"] == 100  # from the first element only


def test_broadcaster_checks_lengths():
    broadcaster = TransformBroadcaster(transforms=[], mapping={"a": "x", "b": "y"})
    with pytest.raises(ValueError, match="inconsistent"):
        broadcaster({"x": [1, 2], "y": [1]})
    with pytest.raises(ValueError, match="no element"):
        broadcaster({"x": [], "y": []})


def test_broadcaster_shares_random_parameters_only_when_asked():
    np.random.seed(0)
    shared = TransformBroadcaster([RandomShift()], {"img": ["a", "b"]}, share_random_params=True)
    out = shared({"a": 0, "b": 0})
    assert out["a"] == out["b"]
    separate = TransformBroadcaster([RandomShift()], {"img": ["a", "b"]})
    out = separate({"a": 0, "b": 0})
    assert out["a"] != out["b"]


def test_random_choice_follows_prob_and_builds_configs():
    TRANSFORMS.register_module(module=Tag)
    choice = RandomChoice([[dict(type="Tag", name="a")], [Tag("b")]], prob=[0.8, 0.2])
    np.random.seed(1)
    picks = [choice({})["tags"][0] for _ in range(500)]
    assert 0.72 < picks.count("a") / 500 < 0.88
    assert [len(c) for c in choice] == [1, 1]
    always_b = RandomChoice([[Tag("a")], [Tag("b")]], prob=[0.0, 1.0])
    assert always_b({})["tags"] == ["b"]


def test_random_choice_checks_prob():
    with pytest.raises(ValueError, match="same length"):
        RandomChoice([[Tag("a")], [Tag("b")]], prob=[1.0])
    with pytest.raises(ValueError, match="sum to 1"):
        RandomChoice([[Tag("a")], [Tag("b")]], prob=[0.5, 0.6])


def test_random_apply_probability():
    assert RandomApply([Tag("a")], prob=1.0)({})["tags"] == ["a"]
    assert RandomApply([Tag("a")], prob=0.0)({}) == {}
    np.random.seed(2)
    applied = sum("tags" in RandomApply(Tag("a"), prob=0.3)({}) for _ in range(500))
    assert 0.22 < applied / 500 < 0.38
