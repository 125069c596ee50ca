"""TestTimeAug: the product of the alternatives of each stage, one view each, as a dict of lists.

Cases from mmcv's TestTimeAug documentation: ``transforms`` is a list of stages,
each a list of alternatives; every combination (one alternative per stage, in
``itertools.product`` order) processes its own copy of the input, and the
result maps each key to the list of its values in the views.
"""

from __future__ import annotations

import pytest

from cadence.registry import TRANSFORMS
from cadence.transforms import BaseTransform, TestTimeAug


class Tag(BaseTransform):
    """Appends ``name`` to ``results['trace']`` (a list, changed in place)."""

    def __init__(self, name):
        self.name = name

    def transform(self, results):
        results["trace"].append(self.name)
        return results


def test_views_are_the_product_of_the_stages_in_order():
    aug = TestTimeAug([[Tag("resize_a"), Tag("resize_b")], [Tag("flip"), Tag("no_flip")],
                       [Tag("pack")]])  # fmt: skip
    out = aug({"trace": [], "img_id": 7})
    assert len(aug) == 4
    assert out["trace"] == [
        ["resize_a", "flip", "pack"],
        ["resize_a", "no_flip", "pack"],
        ["resize_b", "flip", "pack"],
        ["resize_b", "no_flip", "pack"],
    ]
    assert out["img_id"] == [7, 7, 7, 7]  # every key is a list with one value per view
    assert set(out) == {"trace", "img_id"}


def test_each_view_works_on_its_own_copy_of_the_input():
    results = {"trace": ["loaded"]}
    out = TestTimeAug([[Tag("a"), Tag("b")]])(results)
    assert out["trace"] == [["loaded", "a"], ["loaded", "b"]]
    assert results == {"trace": ["loaded"]}  # the input is untouched


def test_alternatives_may_be_configs_and_the_transform_builds_from_its_config():
    TRANSFORMS.register_module(module=Tag)
    aug = TRANSFORMS.build(dict(type="TestTimeAug", transforms=[[dict(type="Tag", name="x"),
                                                                  Tag("y")]]))  # fmt: skip
    assert isinstance(aug, TestTimeAug)
    assert aug({"trace": []})["trace"] == [["x"], ["y"]]


def test_an_empty_list_of_stages_gives_the_input_as_one_view():
    assert TestTimeAug([])({"a": 1}) == {"a": [1]}


@pytest.mark.parametrize(
    ("transforms", "match"),
    [
        ([[Tag("a"), 3]], "callable or a config dict"),
        ([Tag("a")], r"transforms\[0\] must be a list"),
        ([dict(type="Tag", name="a")], r"transforms\[0\] must be a list"),
        (dict(type="Tag"), "list of stages"),
    ],
)
def test_malformed_transforms_are_type_errors(transforms, match):
    with pytest.raises(TypeError, match=match):
        TestTimeAug(transforms)


def test_a_view_that_drops_the_sample_is_an_error():
    aug = TestTimeAug([[Tag("a"), lambda results: None]])
    with pytest.raises(RuntimeError, match="view 1"):
        aug({"trace": []})


def test_views_with_different_keys_are_an_error():
    aug = TestTimeAug([[lambda r: {"a": 1}, lambda r: {"b": 1}]])
    with pytest.raises(KeyError, match="same keys"):
        aug({})
