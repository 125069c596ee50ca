"""The roots that mmengine has for downstream code only (task utilities, inferencers, runner
constructors): empty in cadence, but downstream projects register into them and build from them."""

from __future__ import annotations

import pytest

from cadence.registry import INFERENCERS, RUNNER_CONSTRUCTORS, TASK_UTILS, Registry


@pytest.mark.parametrize(
    ("registry", "name"),
    [
        (TASK_UTILS, "task util"),
        (INFERENCERS, "inferencer"),
        (RUNNER_CONSTRUCTORS, "runner constructor"),
    ],
)
def test_downstream_roots_have_mmengine_names_and_build_what_is_registered(
    registry: Registry, name: str
) -> None:
    assert isinstance(registry, Registry) and registry.name == name
    assert registry.parent is None

    @registry.register_module()
    class Assigner:
        def __init__(self, iou: float = 0.5) -> None:
            self.iou = iou

    built = registry.build(dict(type="Assigner", iou=0.7))
    assert isinstance(built, Assigner) and built.iou == 0.7
    assert registry.get("Assigner") is Assigner
