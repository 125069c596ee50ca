"""Building a run's loops from their configs (the loops package builds loops)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..optim.scheduler.resume_policy import check_policy
from ..registry import LOOPS, located_copy

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


class LoopConfigError(ValueError, RuntimeError):
    """A loop config that contradicts itself (mmengine raises RuntimeError)."""


def build_loop(
    mode: str, loop_cfg: Any, runner: RunnerProtocol, dataloader: Any, evaluator: Any = None
) -> Any:
    """The ``train``/``val``/``test`` loop of ``loop_cfg`` (a built loop is returned as is).

    A train config without ``type`` becomes ``EpochBasedTrainLoop``, or
    ``IterBasedTrainLoop`` with ``by_epoch=False`` or ``max_iters`` (mmengine's rule);
    val/test configs default to ``ValLoop``/``TestLoop``. ``train_cfg.resume_policy``
    (``'keep'``/``'stretch'``, :mod:`cadence.optim.scheduler.resume_policy`) is set on the loop.
    """
    if not isinstance(loop_cfg, Mapping):
        return loop_cfg
    cfg = located_copy(loop_cfg)
    if mode == "train":
        if "type" in cfg and "by_epoch" in cfg:
            raise LoopConfigError(
                f"Only one of type and by_epoch may be set in train_cfg, got type="
                f"{cfg['type']!r} and by_epoch={cfg['by_epoch']!r}: the type decides whether "
                "the loop counts epochs (remove by_epoch, or `_delete_=True` a base config's)"
            )
        by_epoch = cfg.pop("by_epoch", None)
        policy = check_policy(cfg.pop("resume_policy", "keep"))
        if "type" not in cfg:
            if by_epoch is None:
                by_epoch = "max_iters" not in cfg
            cfg["type"] = "EpochBasedTrainLoop" if by_epoch else "IterBasedTrainLoop"
        loop = LOOPS.build(cfg, default_args=dict(runner=runner, dataloader=dataloader),
                           key_path="train_cfg")  # fmt: skip
        loop.resume_policy = policy  # what ParamSchedulerHook does on a longer resume
        return loop
    cfg.setdefault("type", "ValLoop" if mode == "val" else "TestLoop")
    return LOOPS.build(
        cfg, default_args=dict(runner=runner, dataloader=dataloader, evaluator=evaluator),
        key_path=f"{mode}_cfg",
    )  # fmt: skip
