"""Fallback registrations: cadence's generic transforms leave their names free for mmcv."""

from __future__ import annotations

import pytest

import cadence.transforms as cadence_transforms
from cadence.registry import TRANSFORMS, Registry, isolated_registries

GENERIC = ("Compose", "KeyMapper", "RandomApply", "RandomChoice", "TestTimeAug",
           "TransformBroadcaster")  # fmt: skip


@pytest.mark.parametrize("name", GENERIC)
def test_generic_transform_is_found_but_not_registered(name: str) -> None:
    assert TRANSFORMS.get(name) is getattr(cadence_transforms, name)
    assert name not in TRANSFORMS.module_dict  # mmengine's root holds none of them


@pytest.mark.parametrize("name", GENERIC)
def test_a_package_registering_the_same_name_takes_it_over(name: str) -> None:
    with isolated_registries(TRANSFORMS):

        @TRANSFORMS.register_module(name=name)
        class Theirs:  # as mmcv.transforms registers its own Compose...
            def __init__(self, **kwargs: object) -> None:
                self.kwargs = kwargs

        assert TRANSFORMS.get(name) is Theirs
        assert isinstance(TRANSFORMS.build({"type": name}), Theirs)
    assert TRANSFORMS.get(name) is getattr(cadence_transforms, name)


def test_fallback_is_offered_as_a_suggestion_and_registered_names_win() -> None:
    reg = Registry("thing", scope="fallback_test")

    @reg.register_fallback()
    class Widget:
        pass

    assert reg.get("Widget") is Widget and "Widget" in reg.fallbacks
    with pytest.raises(Exception, match="Did you mean 'Widget'"):
        reg.lookup("Widgt")

    @reg.register_module(name="Widget")
    class Other:
        pass

    assert reg.get("Widget") is Other
