"""``optim_wrapper=dict(skip_nonfinite=True, on_repeated='rollback')``: roll back to the
last checkpoint after too many non-finite steps in a row.

A rollback restores the model and the optimizer state from the last checkpoint
the :class:`~cadence.hooks.CheckpointHook` saved, on every rank (the guard's
decision is the same on all of them). Everything else goes on from where it is:
the training position and the data (the batches that follow, not the ones that
went bad), the learning rates and other optimizer hyper-parameters the
schedulers set for this position, the random streams, and the skip counts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def _guards(wrapper: Any) -> list[Any]:
    wrappers = list(wrapper.values()) if callable(getattr(wrapper, "values", None)) else [wrapper]
    found = [getattr(w, "nonfinite_guard", None) for w in wrappers]
    return [g for g in found if g is not None and g.on_repeated == "rollback"]


def attach_rollback(runner: RunnerProtocol, last_checkpoint: Callable[[], str | None]) -> None:
    """Let the run's rolling-back guards restore ``last_checkpoint()``."""
    for guard in _guards(runner.optim_wrapper):
        guard.rollback = lambda: rollback(runner, last_checkpoint())


def rollback(runner: RunnerProtocol, path: str | None) -> None:
    """Restore the model and optimizer state of checkpoint ``path`` (module docstring)."""
    from ..checkpoint import read_checkpoint
    from ..contracts import Trained
    from ..optim.optimizer.nonfinite import NonFiniteStepsError

    runner.wait_for_checkpoint()
    if not path or not os.path.isfile(path):
        raise NonFiniteStepsError(
            "too many non-finite steps in a row, and on_repeated='rollback' has no checkpoint "
            "to roll back to yet (save one earlier: CheckpointHook interval)"
        )
    wrapper: Any = runner.optim_wrapper
    wrappers = list(wrapper.values()) if callable(getattr(wrapper, "values", None)) else [wrapper]
    hyper = [
        [{k: v for k, v in group.items() if k != "params"} for group in w.optimizer.param_groups]
        for w in wrappers
    ]
    counts = [w.nonfinite_guard.state_dict() for w in wrappers if hasattr(w, "nonfinite_guard")]
    checkpoint = read_checkpoint(path, map_location="cpu")
    trained = Trained(runner.model, runner.optim_wrapper, runner.param_schedulers)
    runner.strategy.restore(
        trained, path, checkpoint, resume_optimizer=True, resume_param_scheduler=False
    )  # fmt: skip
    for w, groups in zip(wrappers, hyper):
        for group, saved in zip(w.optimizer.param_groups, groups):
            group.update(saved)
    for w, state in zip([w for w in wrappers if hasattr(w, "nonfinite_guard")], counts):
        w.nonfinite_guard.load_state_dict(state)
    runner.logger.warning(
        f"non-finite steps: rolled the model and optimizer back to {path}; training goes on "
        f"from iteration {runner.iter + 1} with the next batches"
    )
