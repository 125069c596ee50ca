"""Averaged copies of a model's weights: EMA, EMA with momentum annealing, and SWA.

An averaged model keeps its own copy of the source model (``self.module``) and
folds the source's current weights into it on each :meth:`update_parameters`.
The built-in rules are all linear interpolations ``avg += w * (src - avg)``, so
one update is a single fused ``torch._foreach_lerp_`` over every tensor.
"""

from __future__ import annotations

import copy
import logging
import weakref
from abc import ABCMeta, abstractmethod
from typing import Any

import torch
from torch import Tensor, nn

from ..logging import print_log
from ..registry import MODELS

_Where = tuple[dict[str, Any], str]  # (the owner's _parameters or _buffers dict, name)


def _slots(model: nn.Module, params: bool, buffers: str) -> dict[str, _Where]:
    """Where each named tensor of ``model`` is registered (shared tensors once).

    ``buffers`` is ``'none'``, ``'persistent'`` (those in the state dict) or
    ``'all'``. Looking tensors up in their owner's dict on every use, rather
    than keeping them, stays right when ``.to()`` replaces buffers.
    """
    where: dict[str, _Where] = {}
    seen: set[int] = set()
    for mod_name, mod in model.named_modules():
        prefix = f"{mod_name}." if mod_name else ""
        tables: list[tuple[dict[str, Any], Any]] = []
        if params:
            tables.append((mod._parameters, ()))
        if buffers != "none":
            skip = mod._non_persistent_buffers_set if buffers == "persistent" else ()
            tables.append((mod._buffers, skip))
        for table, skip in tables:
            for name, tensor in table.items():
                if tensor is None or name in skip or id(tensor) in seen:
                    continue
                seen.add(id(tensor))
                where[prefix + name] = (table, name)
    return where


def _on_devices(source: list[Tensor], targets: list[Tensor]) -> list[Tensor]:
    return [s if s.device == t.device else s.to(t.device) for s, t in zip(source, targets)]


class AveragingArgumentError(ValueError, AssertionError):
    """An averaging argument mmengine rejects with ``assert`` (a ``ValueError``, and an
    ``AssertionError`` for code written against mmengine)."""


class _Plan:
    """The averaged/source tensor pairs of one source model, matched by name once."""

    def __init__(self, averaged: nn.Module, source: nn.Module, update_buffers: bool, owner: str):
        kind = "persistent" if update_buffers else "none"
        mine, theirs = _slots(averaged, True, kind), _slots(source, True, kind)
        missing = [k for k in mine if k not in theirs]
        if missing:
            raise KeyError(
                f"{owner}.update_parameters: the source model has no {', '.join(missing[:5])}; "
                "it must have the structure of the averaged model"
            )
        self.avg = list(mine.values())
        self.src = [theirs[k] for k in mine]
        is_float = [table[name].is_floating_point() for table, name in self.avg]
        self.avg_float = [w for w, f in zip(self.avg, is_float) if f]
        self.src_float = [w for w, f in zip(self.src, is_float) if f]
        self.avg_other = [w for w, f in zip(self.avg, is_float) if not f]
        self.src_other = [w for w, f in zip(self.src, is_float) if not f]
        self.avg_buffers: list[_Where] = []
        self.src_buffers: list[_Where] = []
        if not update_buffers:  # buffers follow the source
            mine_b, theirs_b = _slots(averaged, False, "all"), _slots(source, False, "all")
            shared = [k for k in mine_b if k in theirs_b]
            self.avg_buffers = [mine_b[k] for k in shared]
            self.src_buffers = [theirs_b[k] for k in shared]
        self.averaged = weakref.ref(averaged)
        self.source = weakref.ref(source)

    @staticmethod
    def fetch(slots: list[_Where]) -> list[Tensor]:
        return [table[name] for table, name in slots]


class BaseAveragedModel(nn.Module, metaclass=ABCMeta):
    """A running average of another model's weights.

    Args:
        model: the model to average; a deep copy (without gradients) is kept
            in ``self.module``.
        interval: average every ``interval`` updates (the others only count).
        device: where the copy lives (default: where ``model`` lives).
        update_buffers: also average the floating point buffers (BatchNorm
            statistics); otherwise buffers are copied from the source on every
            update.

    The first update copies the source. ``steps`` (a buffer, so it is part of
    the state dict) counts updates. Subclasses define :meth:`avg_func`.
    """

    steps: Tensor

    def __init__(
        self,
        model: nn.Module,
        interval: int = 1,
        device: torch.device | str | None = None,
        update_buffers: bool = False,
    ) -> None:
        super().__init__()
        if not isinstance(interval, int) or isinstance(interval, bool) or interval < 1:
            raise ValueError(f"interval must be a positive int, got {interval!r}")
        self.module = copy.deepcopy(model).requires_grad_(False)
        if device is not None:
            self.module = self.module.to(device)
        self.interval = interval
        self.update_buffers = update_buffers
        self.register_buffer("steps", torch.tensor(0, dtype=torch.long, device=device))
        self._count = 0  # host copy of ``steps``: no device sync to decide what to do
        self._plan: _Plan | None = None

    # ------------------------------------------------------------ averaging
    @abstractmethod
    def avg_func(self, averaged_param: Tensor, source_param: Tensor, steps: int) -> None:
        """Fold ``source_param`` into ``averaged_param`` in place (``steps``: updates so far)."""

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the averaged copy."""
        return self.module(*args, **kwargs)

    def _plan_for(self, model: nn.Module) -> _Plan:
        plan = self._plan
        if plan is None or plan.source() is not model or plan.averaged() is not self.module:
            plan = self._plan = _Plan(self.module, model, self.update_buffers, type(self).__name__)
        return plan

    @torch.no_grad()
    def update_parameters(self, model: nn.Module) -> None:
        """Fold ``model``'s current weights into the average (the first call copies them)."""
        plan = self._plan_for(model)
        if self._count == 0:
            for a, s in zip(plan.fetch(plan.avg), plan.fetch(plan.src)):
                a.copy_(s)
        elif self._count % self.interval == 0:
            averaged = plan.fetch(plan.avg_float)
            source = _on_devices(plan.fetch(plan.src_float), averaged)
            weight = self._fused_weight(self._count)
            if weight is not None:
                torch._foreach_lerp_(averaged, source, weight)
            else:
                for a, s in zip(averaged, source):
                    self.avg_func(a, s, self._count)
            # integer state (BatchNorm's batch counter) is copied, not averaged
            for a, s in zip(plan.fetch(plan.avg_other), plan.fetch(plan.src_other)):
                a.copy_(s)
        if plan.avg_buffers:
            mine = plan.fetch(plan.avg_buffers)
            torch._foreach_copy_(mine, _on_devices(plan.fetch(plan.src_buffers), mine))
        self._count += 1
        self.steps.add_(1)

    def _fused_weight(self, steps: int) -> float | None:
        """The ``lerp`` weight that :meth:`avg_func` applies, if it is a plain lerp."""
        return None

    # ---------------------------------------------------------------- state
    def __getstate__(self) -> dict[str, Any]:
        state = dict(super().__getstate__())
        state["_plan"] = None  # weak references do not pickle; the plan is rebuilt on use
        return state

    def _load_from_state_dict(self, state_dict: Any, prefix: str, *args: Any) -> None:
        super()._load_from_state_dict(state_dict, prefix, *args)
        if prefix + "steps" in state_dict:
            self._count = int(self.steps)


class _LerpAveragedModel(BaseAveragedModel):
    """An average whose rule is ``avg.lerp_(src, weight(steps))``."""

    @abstractmethod
    def lerp_weight(self, steps: int) -> float:
        """Weight of the source in the update after ``steps`` updates."""

    def avg_func(self, averaged_param: Tensor, source_param: Tensor, steps: int) -> None:
        """``averaged = (1 - w) * averaged + w * source`` with ``w = lerp_weight(steps)``."""
        averaged_param.lerp_(source_param, self.lerp_weight(steps))

    def _fused_weight(self, steps: int) -> float | None:
        # a subclass that redefines avg_func gets its own rule, tensor by tensor
        if type(self).avg_func is _LerpAveragedModel.avg_func:
            return self.lerp_weight(steps)
        return None


@MODELS.register_module()
class StochasticWeightAverage(_LerpAveragedModel):
    """Stochastic weight averaging: the plain mean of the weights seen at each average.

    After ``k`` averaging updates (every ``interval`` steps) the weights are the
    mean of the first copy and the ``k`` averaged snapshots.
    """

    def lerp_weight(self, steps: int) -> float:
        """``1 / (n + 1)`` for the ``n``-th averaged snapshot."""
        return 1.0 / float(steps // self.interval + 1)


@MODELS.register_module()
class ExponentialMovingAverage(_LerpAveragedModel):
    """Exponential moving average: ``averaged = (1 - momentum) * averaged + momentum * source``.

    ``momentum`` is the weight of the *new* value (mmengine's convention, not
    the optimizer's), so it is usually small (default 0.0002).
    """

    def __init__(
        self,
        model: nn.Module,
        momentum: float = 0.0002,
        interval: int = 1,
        device: torch.device | str | None = None,
        update_buffers: bool = False,
    ) -> None:
        super().__init__(model, interval, device, update_buffers)
        if not 0.0 < momentum < 1.0:
            raise AveragingArgumentError(f"momentum must be in range (0, 1), got {momentum}")
        if momentum > 0.5:
            print_log(
                f"EMA momentum {momentum} is the weight of the new value and is usually small "
                "(e.g. 0.0002); a large value makes the average follow the model closely",
                logger="current",
                level=logging.WARNING,
            )
        self.momentum = momentum

    def lerp_weight(self, steps: int) -> float:
        """The constant ``momentum``."""
        return self.momentum


@MODELS.register_module()
class MomentumAnnealingEMA(ExponentialMovingAverage):
    """EMA whose momentum starts large and anneals: ``max(momentum, gamma / (gamma + steps))``."""

    def __init__(
        self,
        model: nn.Module,
        momentum: float = 0.0002,
        gamma: int = 100,
        interval: int = 1,
        device: torch.device | str | None = None,
        update_buffers: bool = False,
    ) -> None:
        super().__init__(model, momentum, interval, device, update_buffers)
        if gamma <= 0:
            raise AveragingArgumentError(f"gamma must be greater than 0, got {gamma}")
        self.gamma = gamma

    def lerp_weight(self, steps: int) -> float:
        """``max(momentum, gamma / (gamma + steps))``."""
        return max(self.momentum, self.gamma / (self.gamma + steps))


__all__ = [
    "BaseAveragedModel", "ExponentialMovingAverage", "MomentumAnnealingEMA",
    "StochasticWeightAverage",
]  # fmt: skip
