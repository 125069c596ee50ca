"""What each rank keeps for itself in a checkpoint: its RNG streams and its buffers."""

from __future__ import annotations

import warnings
from typing import Any, Protocol

import torch
from torch import nn

from ..utils.rng import rng_state, set_rng_state


def gather_rng_states() -> dict[str, Any]:
    """Every rank's RNG streams, gathered on all ranks: ``{'world_size', 'ranks': [...]}``.

    Every rank of the job must call this (it is a collective when distributed).
    """
    from ..dist import all_gather_object

    states = all_gather_object(rng_state())
    return {"world_size": len(states), "ranks": states}


def restore_rng_states(
    saved: dict[str, Any], rank: int, world_size: int, logger: Any = None
) -> None:
    """Give this rank back its own saved RNG streams.

    When the world size changed, ranks that existed before restore their own
    streams and new ranks keep the streams seeded at start-up (a warning says so).
    A single-process checkpoint of an older layout (one state) restores on every rank.
    """
    if "ranks" not in saved:
        set_rng_state(saved)
        return
    states = list(saved["ranks"])
    if len(states) != world_size:
        message = (
            f"the checkpoint holds the RNG streams of {len(states)} rank(s) but this run has "
            f"{world_size}: ranks below {min(len(states), world_size)} restore their own "
            "streams, the others keep the streams seeded at start-up"
        )
        warnings.warn(message, stacklevel=2)
        if logger is not None:
            logger.warning(message)
    if rank < len(states):
        set_rng_state(states[rank])


def rank_local_buffers(module: nn.Module) -> dict[str, torch.Tensor]:
    """This rank's non-parameter buffers (BatchNorm statistics...), as CPU copies.

    Sharded engines (FSDP2, DeepSpeed) save one rank's copy of buffers that are
    not sharded although each rank updates its own; DTensor buffers are left to them.
    """
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:  # pragma: no cover - torch without DTensor
        DTensor = ()  # type: ignore[assignment,misc]  # noqa: N806
    return {
        name: buffer.detach().to("cpu", copy=True)
        for name, buffer in module.named_buffers()
        if not isinstance(buffer, DTensor)
    }


def restore_rank_local_buffers(module: nn.Module, saved: dict[str, torch.Tensor]) -> None:
    """Copy what :func:`rank_local_buffers` saved on this rank back into ``module``."""
    own = dict(module.named_buffers())
    with torch.no_grad():
        for name, value in saved.items():
            if name in own and own[name].shape == value.shape:
                own[name].copy_(value)


class Ranks(Protocol):
    """Where this process stands among the run's (a strategy): read when a part loads."""

    @property
    def rank(self) -> int: ...

    @property
    def world_size(self) -> int: ...


class RngStreams:
    """Every rank's RNG streams as one checkpoint part (saving gathers: a collective).

    ``ranks`` is asked for this process's rank when the streams are restored, so the
    part may be made before the process group exists.
    """

    def __init__(self, ranks: Ranks, logger: Any = None) -> None:
        self.ranks, self.logger = ranks, logger

    def state_dict(self) -> dict[str, Any]:
        return gather_rng_states()

    def load_state_dict(self, saved: dict[str, Any]) -> None:
        ranks = self.ranks
        restore_rng_states(saved, ranks.rank, ranks.world_size, self.logger)


class RankLocalBuffers:
    """This rank's non-parameter buffers of ``module`` as a checkpoint part."""

    def __init__(self, module: nn.Module) -> None:
        self.module = module

    def state_dict(self) -> dict[str, torch.Tensor]:
        return rank_local_buffers(self.module)

    def load_state_dict(self, saved: dict[str, torch.Tensor]) -> None:
        restore_rank_local_buffers(self.module, saved)


class LoaderPlace:
    """This rank's training dataloader's own state, where it keeps one (a stream's place in
    each worker: :mod:`cadence.dataset.stream`), as a checkpoint part.

    ``loop`` is the training loop; its dataloader is read when saving and loading (a hook
    may replace it). Loaders without ``state_dict``/``load_state_dict`` save None.
    """

    def __init__(self, loop: Any) -> None:
        self.loop = loop

    def state_dict(self) -> Any:
        from ..dataset.stream import resumes_itself

        loader: Any = getattr(self.loop, "dataloader", None)
        return loader.state_dict() if resumes_itself(loader) else None

    def load_state_dict(self, saved: Any) -> None:
        from ..dataset.stream import mark_restored, resumes_itself

        loader: Any = getattr(self.loop, "dataloader", None)
        if saved is not None and resumes_itself(loader):
            loader.load_state_dict(saved)
            mark_restored(loader)
