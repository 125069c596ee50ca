"""Resuming with another training length: ``train_cfg=dict(max_epochs=N, resume_policy=...)``.

A resumed run trains to the ``max_epochs``/``max_iters`` of its config, which may
differ from the length the checkpoint was saved with (that one is in the
checkpoint's ``meta['train_length']``). The parameter schedulers are restored
as saved, so a scheduler whose ``end`` was the old length still ends there.
``resume_policy`` says what happens to such schedulers:

* ``'keep'`` (the default, and mmengine's behaviour): nothing changes. The
  schedule ends where it was planned; past its ``end`` the values stay where it
  left them (a cosine schedule stays at ``eta_min``).
* ``'stretch'``: each scheduler whose ``end`` was the old length (in its unit:
  epochs, or iterations for ``by_epoch=False`` and ``convert_to_iter_based``
  ones) gets the new length, and so do its length arguments that were derived
  from ``end`` (``T_max``, ``total_steps``, ``total_iters``). The values become
  those the run would have now had it been planned with the new length from the
  start: the schedulers of that optimizer are replayed from step 0 to the
  current position (so the learning rate may go up at the resume). Schedulers
  that end elsewhere (a warm-up) are replayed unchanged.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any

#: The values of ``train_cfg.resume_policy``.
POLICIES = ("keep", "stretch")


def check_policy(policy: Any) -> str:
    """``policy`` if it is one of :data:`POLICIES`; else a ValueError naming the key."""
    if policy not in POLICIES:
        raise ValueError(f"train_cfg.resume_policy must be 'keep' or 'stretch', got {policy!r}")
    return str(policy)


def _length_args(scheduler: Any, old_end: int, new_end: int) -> None:
    span_old, span_new = old_end - scheduler.begin, new_end - scheduler.begin
    for name, offset in (("T_max", 0), ("total_steps", 0), ("total_iters", -1)):
        if getattr(scheduler, name, None) == span_old + offset:
            setattr(scheduler, name, span_new + offset)


def stretch(
    schedulers: Iterable[Any], old: Mapping[str, int], new: Mapping[str, int],
    epoch_length: int | None,
) -> list[Any]:  # fmt: skip
    """Give the new length to the schedulers that ended at the old one and replay their
    optimizer's schedulers to the current step; return the schedulers stretched.

    ``old``/``new`` hold ``max_epochs`` and ``max_iters``; ``epoch_length`` is the
    iterations per epoch (None where epoch-based schedulers never step in training).
    """
    stretched = []
    by_owner: dict[int, list[Any]] = {}
    for scheduler in schedulers:
        by_owner.setdefault(id(getattr(scheduler, "_owner", scheduler)), []).append(scheduler)
        if getattr(scheduler, "need_val_args", False):
            continue
        unit = "max_epochs" if scheduler.by_epoch else "max_iters"
        if scheduler.end == old[unit] and old[unit] != new[unit]:
            _length_args(scheduler, old[unit], new[unit])
            scheduler.end = new[unit]
            stretched.append(scheduler)
    for group in by_owner.values():
        if any(s in stretched for s in group):
            _replay(group, epoch_length)
    return stretched


def _replay(schedulers: list[Any], epoch_length: int | None) -> None:
    """Set every value from step 0 as the training hooks step them, up to each
    scheduler's saved step count (without optimizer steps: no order warning)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r".*step\(\) was called before optimizer")
        _replay_steps(schedulers, epoch_length)


def _replay_steps(schedulers: list[Any], epoch_length: int | None) -> None:
    if any(getattr(s, "need_val_args", False) for s in schedulers):
        raise ValueError(
            "resume_policy='stretch' cannot replay an optimizer whose schedulers include a "
            "plateau scheduler (its steps depend on past metrics); use resume_policy='keep'"
        )
    targets = [s._global_step for s in schedulers]
    groups = schedulers[0]._owner.param_groups
    for scheduler in schedulers:
        for group in groups:
            group[scheduler.param_name] = group[f"initial_{scheduler.param_name}"]
    for scheduler in schedulers:  # as each was built: last_step -1, then one step
        scheduler.last_step, scheduler._global_step = -1, -1
        scheduler.step()
    iters = max([t for s, t in zip(schedulers, targets) if not s.by_epoch], default=0)
    for it in range(1, iters + 1):
        for scheduler, target in zip(schedulers, targets):
            if not scheduler.by_epoch and scheduler._global_step < target:
                scheduler.step()
        if epoch_length and it % epoch_length == 0:
            _step_epochs(schedulers, targets)
    while any(s.by_epoch and s._global_step < t for s, t in zip(schedulers, targets)):
        _step_epochs(schedulers, targets)  # epoch schedulers alone (no iteration ones)


def _step_epochs(schedulers: list[Any], targets: list[int]) -> None:
    for scheduler, target in zip(schedulers, targets):
        if scheduler.by_epoch and scheduler._global_step < target:
            scheduler.step()


def flat(schedulers: Any) -> list[Any]:
    """Every scheduler of a list, or of a dict of lists (one list per optimizer)."""
    if schedulers is None:
        return []
    if isinstance(schedulers, Mapping):
        return [s for group in schedulers.values() for s in group]
    return list(schedulers)
