"""``OptimWrapper``: one optimizer with gradient accumulation and clipping."""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from numbers import Integral
from typing import Any

from torch import Tensor, nn
from torch.optim import Optimizer

from ...registry import OPTIM_WRAPPERS
from ...resilience import heartbeat
from ...resilience.heartbeat import BACKWARD, FORWARD, OPTIMIZER
from .base import BaseOptimWrapper
from .clip import GradClipper


def _check_count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


#: Reusable (``nullcontext`` keeps no state), so a plain iteration allocates nothing here.
_NO_CONTEXT: AbstractContextManager[Any] = nullcontext()


#: The methods :meth:`OptimWrapper.update_params` calls; it skips them when none is overridden.
_STEPS = frozenset(("scale_loss", "backward", "should_update", "step", "zero_grad"))


@OPTIM_WRAPPERS.register_module()
class OptimWrapper(BaseOptimWrapper):
    """Update parameters with one optimizer, accumulating and clipping gradients.

    Args:
        optimizer: the optimizer that owns the parameters.
        accumulative_counts: number of :meth:`update_params` calls whose
            gradients are summed before one optimizer step. Each loss is divided
            by this number, so accumulating ``k`` micro-batches of a mean-reduced
            loss equals one step on the ``k`` times larger batch.
        clip_grad: ``None``, or ``dict(max_norm=..., norm_type=2)`` to clip the
            total gradient norm (``type='norm'``, the default), or
            ``dict(type='value', clip_value=...)`` to clip each gradient entry.

    Typical use in a model's ``train_step``::

        with optim_wrapper.optim_context(model):
            loss = model(batch)
        optim_wrapper.update_params(loss)

    Call :meth:`initialize_count_status` before training (the runner does) so
    that a resumed run and a last, incomplete accumulation window are handled:
    the losses of the last ``max_counts % accumulative_counts`` iterations are
    divided by that remainder instead, and the window ends with a step.
    """

    def __init__(
        self,
        optimizer: Optimizer,
        accumulative_counts: int = 1,
        clip_grad: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(optimizer)
        self._accumulative_counts = _check_count("accumulative_counts", accumulative_counts, 1)
        self._clipper = GradClipper(clip_grad) if clip_grad is not None else None
        self.clip_grad_kwargs: dict[str, Any] | None = (
            dict(self._clipper.kwargs) if self._clipper is not None else None
        )
        self._inner_count = 0
        self._max_counts = -1
        self._remainder_counts = -1
        self._grad_norm: Tensor | None = None
        # no accumulation and no subclass overriding a step: update_params calls
        # the optimizer directly (the same calls, fewer Python frames), unless one of
        # those methods was replaced on this instance (optim_wrapper.step = ...)
        self._direct = self._accumulative_counts == 1 and all(
            getattr(type(self), name) is getattr(OptimWrapper, name) for name in _STEPS
        )

    # ------------------------------------------------------------ updating
    def update_params(
        self,
        loss: Tensor,
        step_kwargs: dict[str, Any] | None = None,
        zero_kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Back-propagate the scaled ``loss``; step and zero the gradients when due."""
        if self._direct and not (step_kwargs or zero_kwargs) and _STEPS.isdisjoint(self.__dict__):
            beat = heartbeat.current  # the hang watchdog's: where the step is
            beat.phase = BACKWARD
            loss.backward()
            self._inner_count += 1
            beat.phase = OPTIMIZER
            if self._clipper is not None:
                self._clip_grad()
            self.optimizer.step()
            self.optimizer.zero_grad()
            return
        self.backward(self.scale_loss(loss))
        if self.should_update():
            if step_kwargs:
                self.step(**step_kwargs)
            else:
                self.step()
            if zero_kwargs:
                self.zero_grad(**zero_kwargs)
            else:
                self.zero_grad()

    def backward(self, loss: Tensor, **kwargs: Any) -> None:
        """``loss.backward(**kwargs)`` and count the call (no scaling here)."""
        heartbeat.current.phase = BACKWARD
        loss.backward(**kwargs)
        self._inner_count += 1

    def step(self, **kwargs: Any) -> None:
        """Clip the gradients when configured, then ``optimizer.step(**kwargs)``."""
        heartbeat.current.phase = OPTIMIZER
        if self._clipper is not None:
            self._clip_grad()
        self.optimizer.step(**kwargs)

    def zero_grad(self, **kwargs: Any) -> None:
        """``optimizer.zero_grad(**kwargs)``."""
        self.optimizer.zero_grad(**kwargs)

    def _clip_grad(self) -> None:
        assert self._clipper is not None
        params = [
            p
            for group in self.optimizer.param_groups
            for p in group["params"]
            if p.grad is not None
        ]
        if params:
            norm = self._clipper(params)
            if norm is not None:
                self._grad_norm = norm

    def scale_loss(self, loss: Tensor) -> Tensor:
        """Divide ``loss`` by the size of the accumulation window it belongs to."""
        counts = self._accumulative_counts
        if counts == 1:
            return loss
        inner, max_counts = self._inner_count, self._max_counts
        if max_counts >= 0 and max_counts - self._remainder_counts <= inner < max_counts:
            counts = self._remainder_counts
        return loss / counts

    def optim_context(self, model: nn.Module) -> AbstractContextManager[Any]:
        """Run the forward pass of one iteration inside this context.

        On accumulation iterations that do not update, a model with ``no_sync``
        (DistributedDataParallel) skips its gradient all-reduce. Subclasses add
        autocast here. Without accumulation this is one shared no-op context.
        """
        heartbeat.current.phase = FORWARD  # (a train_step may run several forward passes)
        if self._accumulative_counts != 1 and not self.should_sync():
            no_sync = getattr(model, "no_sync", None)
            if no_sync is not None:
                return no_sync()
        return _NO_CONTEXT

    # ------------------------------------------------------------ counting
    def initialize_count_status(self, model: nn.Module, init_counts: int, max_counts: int) -> None:
        """Set the number of iterations done (``init_counts``) and in total (``max_counts``)."""
        init_counts = self._inner_count = _check_count("init_counts", init_counts, 0)
        max_counts = self._max_counts = _check_count("max_counts", max_counts, 0)
        counts = self._accumulative_counts
        self._remainder_counts = max_counts % counts
        if init_counts % counts != 0:
            warnings.warn(
                f"resuming at iteration {init_counts}, which is not a multiple of "
                f"accumulative_counts={counts}: the gradients accumulated before the "
                "checkpoint are lost, so the first update uses fewer micro-batches",
                stacklevel=2,
            )
        modules = model.modules() if isinstance(model, nn.Module) else ()
        if counts > 1 and any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in modules):
            warnings.warn(
                "the model has BatchNorm layers: with gradient accumulation their statistics "
                "see only the micro-batches, so results can differ slightly from a big batch",
                stacklevel=2,
            )

    def should_update(self) -> bool:
        """True when the last :meth:`backward` closed an accumulation window."""
        inner = self._inner_count
        return inner % self._accumulative_counts == 0 or inner == self._max_counts

    def should_sync(self) -> bool:
        """True when the next :meth:`backward` will close a window (gradients must sync)."""
        upcoming = self._inner_count + 1
        return upcoming % self._accumulative_counts == 0 or upcoming == self._max_counts

    @property
    def inner_count(self) -> int:
        """How many times :meth:`backward` has run (including resumed iterations)."""
        return self._inner_count

    @property
    def max_counts(self) -> int:
        """Total number of iterations, or -1 before :meth:`initialize_count_status`."""
        return self._max_counts

    @property
    def accumulative_counts(self) -> int:
        """Number of iterations whose gradients make one update."""
        return self._accumulative_counts

    # ------------------------------------------------------------- logging
    def pop_log_vars(self) -> dict[str, Tensor]:
        """``{'grad_norm': tensor}`` once after a step that clipped by norm, else ``{}``."""
        norm = self._grad_norm
        if norm is None:
            return {}
        self._grad_norm = None
        return {"grad_norm": norm.detach()}

    def __repr__(self) -> str:
        lines = [
            f"Type: {type(self).__name__}",
            f"accumulative_counts: {self._accumulative_counts}",
        ]
        if self._clipper is not None:
            lines.append(f"clip_grad: {self._clipper!r}")
        lines.append(f"optimizer:\n{self.optimizer!r}")
        return "\n".join(lines)
