"""Building a run's loops from their configs (the loops package builds loops)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..registry import LOOPS

if TYPE_CHECKING:
    from ..runner.protocol import RunnerProtocol


def build_loop(
    mode: str, loop_cfg: Any, runner: RunnerProtocol, dataloader: Any, evaluator: Any = None
) -> Any:
    """The ``train``/``val``/``test`` loop of ``loop_cfg`` (a built loop is returned as is).

    A train config without ``type`` becomes ``EpochBasedTrainLoop``, or
    ``IterBasedTrainLoop`` with ``by_epoch=False`` or ``max_iters`` (mmengine's rule);
    val/test configs default to ``ValLoop``/``TestLoop``.
    """
    if not isinstance(loop_cfg, Mapping):
        return loop_cfg
    cfg = dict(loop_cfg)
    if mode == "train":
        by_epoch = cfg.pop("by_epoch", None)
        if "type" not in cfg:
            if by_epoch is None:
                by_epoch = "max_iters" not in cfg
            cfg["type"] = "EpochBasedTrainLoop" if by_epoch else "IterBasedTrainLoop"
        return LOOPS.build(cfg, default_args=dict(runner=runner, dataloader=dataloader),
                           key_path="train_cfg")  # fmt: skip
    cfg.setdefault("type", "ValLoop" if mode == "val" else "TestLoop")
    return LOOPS.build(
        cfg, default_args=dict(runner=runner, dataloader=dataloader, evaluator=evaluator),
        key_path=f"{mode}_cfg",
    )  # fmt: skip
