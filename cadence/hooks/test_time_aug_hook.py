"""Test-time augmentation from a hook: wrap ``runner.model`` in a TTA model before testing.

``cadence test --tta`` rewrites the config instead (:mod:`cadence.cli.tta`); this hook and
:func:`build_runner_with_tta` are mmengine's way of doing the same, for code that uses them.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..config.errors import ConfigAssertionError
from ..registry import HOOKS, MODELS, RUNNERS
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


@HOOKS.register_module()
class PrepareTTAHook(Hook):
    """Before testing, replace ``runner.model`` with ``tta_cfg`` built around it (the
    config's ``module`` is the runner's model).

    Args:
        tta_cfg: the config of a :class:`~cadence.model.BaseTTAModel` subclass, e.g.
            ``dict(type='MyTTAModel')``.
    """

    def __init__(self, tta_cfg: dict[str, Any]) -> None:
        if not isinstance(tta_cfg, Mapping):
            raise TypeError(
                f"PrepareTTAHook.tta_cfg must be a model config dict, got {type(tta_cfg).__name__}"
            )
        self.tta_cfg = tta_cfg

    def before_test(self, runner: RunnerProtocol) -> None:
        """Wrap the model (once: a second test run keeps the TTA model it has)."""
        from ..model.test_time_aug import BaseTTAModel

        if isinstance(runner.model, BaseTTAModel):
            return
        cfg = dict(self.tta_cfg)
        cfg["module"] = runner.model
        runner.model = MODELS.build(cfg, key_path="PrepareTTAHook.tta_cfg")  # type: ignore[misc]


def build_runner_with_tta(cfg: Any) -> Any:
    """Build the runner of ``cfg`` to test with test-time augmentation: the test dataset's
    pipeline becomes ``cfg.tta_pipeline`` and a :class:`PrepareTTAHook` wraps the model in
    ``cfg.tta_model`` before testing."""
    for key in ("tta_model", "tta_pipeline"):
        if key not in cfg:
            raise ConfigAssertionError(
                f"build_runner_with_tta needs '{key}' in the config (please make sure "
                f"{key} is defined in your config)",
                key=key,
            )
    cfg = copy.deepcopy(cfg)
    loader = dict(cfg["test_dataloader"])
    loader["dataset"] = {**loader["dataset"], "pipeline": cfg["tta_pipeline"]}
    cfg["test_dataloader"] = loader
    if "runner_type" in cfg:
        runner = RUNNERS.build(cfg)
    else:
        runner = RUNNERS.get("Runner").from_cfg(cfg)
    runner.register_hook(PrepareTTAHook(tta_cfg=cfg["tta_model"]))
    return runner
