"""What a dataloader must remember to continue a run exactly: its sampler and its seeds.

A training loop saves :func:`dataloader_state_dict` with its position and
restores it with :func:`load_dataloader_state_dict` on resume, so the resumed
run shuffles with the same sampler seed and its workers draw from the same
seed even when the run's seed was drawn at random (``randomness.seed`` unset).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from typing import Any

from .worker import WorkerSeeder
from .worker_signals import unshielded


def index_sampler(dataloader: Any) -> tuple[Any, int | None]:
    """The sampler that yields a dataloader's indices, and its batch size.

    With a configured batch sampler, ``dataloader.sampler`` is torch's unused
    default; the real one sits inside the batch sampler.
    """
    sampler = getattr(dataloader, "sampler", None)
    batch_size = getattr(dataloader, "batch_size", None)
    if batch_size is None:
        batch_sampler = getattr(dataloader, "batch_sampler", None)
        sampler = getattr(batch_sampler, "sampler", None)
        batch_size = getattr(batch_sampler, "batch_size", None)
    return sampler, batch_size


def dataloader_state_dict(dataloader: Any) -> dict[str, Any]:
    """The sampler's state (when it has one) and the workers' seed (when cadence seeds them)."""
    state: dict[str, Any] = {}
    sampler, _ = index_sampler(dataloader)
    sampler_state = getattr(sampler, "state_dict", None)
    if callable(sampler_state):
        state["sampler"] = sampler_state()
    init_fn = unshielded(getattr(dataloader, "worker_init_fn", None))
    if isinstance(init_fn, WorkerSeeder):
        state["worker_seed"] = init_fn.seed
    return state


def load_dataloader_state_dict(dataloader: Any, state: Mapping[str, Any]) -> None:
    """Restore what :func:`dataloader_state_dict` saved; missing parts are left as they are."""
    sampler, _ = index_sampler(dataloader)
    load = getattr(sampler, "load_state_dict", None)
    if "sampler" in state and callable(load):
        load(state["sampler"])
    init_fn = unshielded(getattr(dataloader, "worker_init_fn", None))
    if "worker_seed" in state and isinstance(init_fn, WorkerSeeder):
        init_fn.seed = operator.index(state["worker_seed"])
