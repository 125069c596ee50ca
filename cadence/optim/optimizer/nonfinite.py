"""Skip optimizer steps whose loss or gradients are not finite, agreed across ranks.

``optim_wrapper=dict(..., skip_nonfinite=True, max_consecutive=10, on_repeated='stop')``:
before each optimizer step, every rank checks its losses of the accumulation
window and its gradients for inf/NaN, and one all-reduce of that flag decides
for all ranks together: when any rank saw one, every rank skips the step (and
zeroes the gradients), so parameters stay equal across ranks. The skips are
counted (``nonfinite_skips`` in the training logs, kept in checkpoints). After
``max_consecutive`` skipped steps in a row, ``on_repeated='stop'`` raises
:class:`NonFiniteStepsError` on every rank; ``'rollback'`` restores the model
and optimizer from the last checkpoint (see ``cadence.hooks.nonfinite_rollback``)
and training goes on with the next batches. Without ``skip_nonfinite`` nothing
here runs: no check and no collective.

With an ``AmpOptimWrapper`` whose loss scaler is on (float16), only the losses are
checked: overflowing gradients are the scaler's to skip (it lowers its scale).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import Tensor

#: What happens after ``max_consecutive`` skipped steps in a row.
ON_REPEATED = ("stop", "rollback")
#: The ``optim_wrapper`` keys this module reads (removed before the wrapper is built).
GUARD_KEYS = ("skip_nonfinite", "max_consecutive", "on_repeated")


class NonFiniteStepsError(RuntimeError):
    """Too many consecutive optimizer steps had a non-finite loss or gradient."""


class NonFiniteGuard:
    """Decide, for every rank at once, whether the coming optimizer step is skipped.

    Args:
        max_consecutive: skipped steps in a row that trigger ``on_repeated``.
        on_repeated: ``'stop'`` or ``'rollback'``.
        check_grads: check the gradients too (not only the losses).
    """

    def __init__(
        self, max_consecutive: int = 10, on_repeated: str = "stop", check_grads: bool = True
    ) -> None:
        if isinstance(max_consecutive, bool) or not isinstance(max_consecutive, int):
            raise ValueError(f"optim_wrapper.max_consecutive must be an int >= 1, "
                             f"got {max_consecutive!r}")  # fmt: skip
        if max_consecutive < 1:
            raise ValueError(f"optim_wrapper.max_consecutive must be an int >= 1, "
                             f"got {max_consecutive!r}")  # fmt: skip
        if on_repeated not in ON_REPEATED:
            raise ValueError(
                f"optim_wrapper.on_repeated must be 'stop' or 'rollback', got {on_repeated!r}"
            )
        self.max_consecutive = max_consecutive
        self.on_repeated = on_repeated
        self.check_grads = check_grads
        #: steps skipped in all, and in a row up to now
        self.skipped = 0
        self.consecutive = 0
        #: set by the checkpoint hook: restores the last checkpoint (``'rollback'``)
        self.rollback: Callable[[], None] | None = None
        self._loss_bad: Tensor | None = None  # any loss of the window not finite (no sync)

    def see_loss(self, loss: Tensor) -> None:
        """Note whether ``loss`` is finite (on its device: nothing waits for it)."""
        bad = ~torch.isfinite(loss.detach()).all()
        self._loss_bad = bad if self._loss_bad is None else self._loss_bad | bad

    def skip_step(self, optimizer: torch.optim.Optimizer) -> bool:
        """Whether every rank skips this step: one all-reduce of the local flag."""
        from ...dist import all_reduce

        flag = self._local_flag(optimizer)
        self._loss_bad = None
        all_reduce(flag, op="max")
        if not bool(flag.item()):
            self.consecutive = 0
            return False
        self.skipped += 1
        self.consecutive += 1
        if self.consecutive >= self.max_consecutive:
            self._repeated()
        return True

    def _local_flag(self, optimizer: torch.optim.Optimizer) -> Tensor:
        # this rank's own values: a sharded gradient (FSDP's DTensor) by its local shard, so
        # the flag is a plain tensor the all-reduce takes (and every shard is looked at once)
        grads = [
            _local(p.grad) for group in optimizer.param_groups for p in group["params"]
            if p.grad is not None
        ]  # fmt: skip
        device = grads[0].device if grads else torch.device("cpu")
        bad = torch.zeros((), device=device, dtype=torch.bool)
        if self._loss_bad is not None:
            bad = bad | self._loss_bad.to(device)
        if self.check_grads and grads:
            norms = torch._foreach_norm([g.detach() for g in grads])
            bad = bad | ~torch.isfinite(torch.stack([n.to(device) for n in norms])).all()
        return bad.float()

    def _repeated(self) -> None:
        count = self.consecutive
        self.consecutive = 0
        what = (
            f"{count} optimizer steps in a row had a non-finite loss or gradient on some rank "
            f"(skipped {self.skipped} steps in all)"
        )
        if self.on_repeated == "rollback":
            if self.rollback is None:
                raise NonFiniteStepsError(
                    f"{what}; on_repeated='rollback' needs the CheckpointHook (it restores "
                    "the last checkpoint), and this run has none"
                )
            self.rollback()
            return
        raise NonFiniteStepsError(
            f"{what}; stopping (optim_wrapper.on_repeated='stop'). Lower the learning rate, "
            "clip gradients (optim_wrapper.clip_grad), or set on_repeated='rollback' to "
            "continue from the last checkpoint"
        )

    def state_dict(self) -> dict[str, int]:
        """The skip counts."""
        return {"skipped": self.skipped, "consecutive": self.consecutive}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore :meth:`state_dict`'s counts."""
        self.skipped = int(state.get("skipped", 0))
        self.consecutive = int(state.get("consecutive", 0))


def _local(tensor: Tensor) -> Tensor:
    """A DTensor's local shard; any other tensor as it is."""
    to_local = getattr(tensor, "to_local", None)
    return to_local() if callable(to_local) else tensor


class _GuardedSteps:
    """Mixed in before a wrapper class: the steps go through its ``nonfinite_guard``."""

    nonfinite_guard: NonFiniteGuard
    optimizer: torch.optim.Optimizer

    def update_params(
        self,
        loss: Tensor,
        step_kwargs: dict[str, Any] | None = None,
        zero_kwargs: dict[str, Any] | None = None,
    ) -> None:
        """Back-propagate; step (unless skipped) and zero the gradients when due."""
        wrapper: Any = self
        wrapper.backward(wrapper.scale_loss(loss))
        if wrapper.should_update():
            wrapper.step(**(step_kwargs or {}))
            wrapper.zero_grad(**(zero_kwargs or {}))

    def backward(self, loss: Tensor, **kwargs: Any) -> None:
        self.nonfinite_guard.see_loss(loss)
        super().backward(loss, **kwargs)  # type: ignore[misc]

    def step(self, **kwargs: Any) -> None:
        if self.nonfinite_guard.skip_step(self.optimizer):
            return
        super().step(**kwargs)  # type: ignore[misc]

    def pop_log_vars(self) -> dict[str, Any]:
        logged = dict(super().pop_log_vars())  # type: ignore[misc]
        logged["nonfinite_skips"] = self.nonfinite_guard.skipped
        return logged

    def state_dict(self) -> dict[str, Any]:
        state = dict(super().state_dict())  # type: ignore[misc]
        state["nonfinite_guard"] = self.nonfinite_guard.state_dict()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state = dict(state_dict)
        guard = state.pop("nonfinite_guard", None)
        if guard is not None:
            self.nonfinite_guard.load_state_dict(guard)
        super().load_state_dict(state)  # type: ignore[misc]


_GUARDED: dict[type, type] = {}


def guarded_class(cls: type) -> type:
    """``cls`` with :class:`_GuardedSteps` mixed in (one class per wrapper class)."""
    if issubclass(cls, _GuardedSteps):
        return cls
    if cls not in _GUARDED:
        _GUARDED[cls] = type(cls.__name__, (_GuardedSteps, cls), {"__module__": cls.__module__})
    return _GUARDED[cls]


def pop_guard_options(cfg: dict[str, Any]) -> dict[str, Any] | None:
    """Remove :data:`GUARD_KEYS` from a wrapper config; the guard's options, or None when
    ``skip_nonfinite`` is off (``max_consecutive``/``on_repeated`` alone are an error)."""
    options = {key: cfg.pop(key) for key in GUARD_KEYS if key in cfg}
    enabled = options.pop("skip_nonfinite", False)
    if not isinstance(enabled, bool):
        raise ValueError(f"optim_wrapper.skip_nonfinite must be True or False, got {enabled!r}")
    if not enabled:
        if options:
            raise ValueError(
                f"optim_wrapper.{next(iter(options))} needs optim_wrapper.skip_nonfinite=True"
            )
        return None
    return options


def add_nonfinite_guard(wrapper: Any, options: Mapping[str, Any]) -> Any:
    """Make ``wrapper`` skip non-finite steps (module docstring); return it."""
    scaler = getattr(wrapper, "loss_scaler", None)
    scaled = scaler is not None and bool(getattr(scaler, "is_enabled", lambda: False)())
    guard = NonFiniteGuard(check_grads=not scaled, **options)
    wrapper.__class__ = guarded_class(type(wrapper))
    wrapper.nonfinite_guard = guard
    return wrapper
