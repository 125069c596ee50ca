"""Fail fast when a training loss becomes NaN or infinite."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import torch

from ..dist import all_reduce, get_world_size
from ..registry import HOOKS
from ..registry.constraints import validated_by_construction
from .hook import Hook

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


class InvalidLossError(FloatingPointError):
    """A loss term became NaN or infinite during training."""


def _loss_terms(outputs: Mapping[str, Any]) -> list[tuple[str, torch.Tensor]]:
    return [(k, v) for k, v in outputs.items() if "loss" in k and isinstance(v, torch.Tensor)]


def _finite_flags(terms: list[tuple[str, torch.Tensor]]) -> torch.Tensor:
    return torch.isfinite(torch.stack([v.detach().float().reshape(-1).mean() for _, v in terms]))


def invalid_terms(outputs: Mapping[str, Any]) -> list[tuple[str, torch.Tensor]]:
    """The loss entries of ``outputs`` (keys containing ``'loss'``) that are not finite."""
    terms = _loss_terms(outputs)
    if not terms:
        return []
    flags = _finite_flags(terms).tolist()
    return [term for term, ok in zip(terms, flags) if not ok]


def _all_finite(outputs: Mapping[str, Any]) -> bool:
    """Whether every loss term on every rank is finite (one host sync, one tiny all-reduce)."""
    terms = _loss_terms(outputs)
    flag = _finite_flags(terms).all().float().reshape(1) if terms else torch.ones(1)
    if get_world_size() > 1:  # every rank must stop at the same iteration, or the others hang
        all_reduce(flag, op="min")
    return bool(flag[0] > 0)


@HOOKS.register_module()
class CheckInvalidLossHook(Hook):
    """Raise :class:`InvalidLossError` when a loss term is NaN/Inf.

    Checked after every ``interval``-th training iteration (``interval=1``:
    every iteration); like detectron2's anomaly check, the error (a
    ``FloatingPointError``) names the iteration (counting from 1), epoch and
    batch, the offending terms, and the whole loss dict with every value. A
    check costs one host synchronization (and, with several processes, one
    tiny all-reduce so that every rank stops at the same iteration); between
    checks the hook does nothing.

    Args:
        interval: iterations between checks.
    """

    priority = "VERY_HIGH"

    def __init__(self, interval: int = 50) -> None:
        if not isinstance(interval, int) or isinstance(interval, bool) or interval < 1:
            raise ValueError(f"CheckInvalidLossHook.interval must be >= 1, got {interval!r}")
        self.interval = interval

    def after_train_iter(
        self, runner: RunnerProtocol, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        """Check this iteration's loss terms (every ``interval`` iterations)."""
        if (runner.iter + 1) % self.interval or not isinstance(outputs, Mapping):
            return
        if _all_finite(outputs):
            return
        bad = invalid_terms(outputs)
        described = ", ".join(f"{key}={_value(value)}" for key, value in bad)
        if not bad:
            described = f"on another rank (rank {runner.rank} is finite)"
        raise InvalidLossError(
            f"loss became NaN or infinite at iteration {runner.iter + 1} "
            f"(epoch {runner.epoch + 1}, batch {batch_idx}): {described}\n"
            f"loss dict (rank {runner.rank}): {describe_outputs(outputs)}"
        )


def _value(value: Any) -> str:
    """One entry of a loss dict as text: its value (the mean and shape if not a scalar)."""
    if isinstance(value, torch.Tensor):
        number = f"{float(value.detach().float().mean()):g}"
        return number if value.numel() == 1 else f"{number} (mean of shape {tuple(value.shape)})"
    if isinstance(value, float):
        return f"{value:g}"
    return repr(value)


def describe_outputs(outputs: Mapping[str, Any]) -> str:
    """Every entry of a training step's outputs with its value, as ``{key: value, ...}``."""
    return "{" + ", ".join(f"{key}: {_value(value)}" for key, value in outputs.items()) + "}"


# building it only checks and stores its arguments: `cadence check` builds one
validated_by_construction(CheckInvalidLossHook)
