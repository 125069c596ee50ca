"""CheckpointManager with two gloo ranks: every rank's per-rank parts land under their own
names, whatever order each rank registered them in (issue #27 trials: a rank that had
asked the manager for something before registered its parts in another order, and the
saved message hub of rank 1 was rank 1's model buffers)."""

from __future__ import annotations

import os
from typing import Any

import pytest
import torch

from cadence.contracts import Trained
from cadence.dist.testing import run_distributed


class Value:
    """A part whose state is one value."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def state_dict(self) -> Any:
        return {"value": self.value}

    def load_state_dict(self, state: Any) -> None:
        self.value = state["value"]


class OneFileSteps:
    """The one-file checkpoint steps (rank 0 writes) over the real process group."""

    supports_async_save = False

    @property
    def rank(self) -> int:
        return torch.distributed.get_rank()

    @property
    def world_size(self) -> int:
        return torch.distributed.get_world_size()

    def checkpoint_state(self, trained: Trained, **options: Any) -> dict[str, Any]:
        return {}

    def save_companion(self, trained: Trained, filename: str, **options: Any) -> None:
        pass

    def companion_digests(self, filename: str) -> dict:
        return {}

    def verify_checkpoint(self, filename: str) -> Any:
        from cadence.checkpoint.files import verify_checkpoint

        return verify_checkpoint(filename)

    def barrier(self) -> None:
        torch.distributed.barrier()

    def restore(self, trained: Trained, filename: str, checkpoint: dict, **options: Any) -> None:
        pass


def save_and_resume(root: str) -> dict[str, Any]:
    from cadence.checkpoint.manager import CheckpointManager

    rank = torch.distributed.get_rank()
    manager = CheckpointManager(OneFileSteps(), root)  # type: ignore[arg-type]
    parts = {name: Value(f"{name} of rank {rank}") for name in ("hub", "buffers", "stream")}
    order = ["hub", "buffers", "stream"] if rank == 0 else ["stream", "buffers", "hub"]
    for name in order:
        manager.register(name, parts[name], per_rank=True, shared=name == "hub")
    trained = Trained()  # the steps here keep no model: only the parts travel
    path = manager.save(os.path.join(root, "ck.pth"), trained, manager.collect(meta={}))
    for part in parts.values():
        part.value = None
    manager.resume(path, trained)
    return {name: part.value for name, part in parts.items()}


@pytest.mark.dist
def test_per_rank_parts_registered_in_another_order_keep_their_names(tmp_path):
    restored = run_distributed(save_and_resume, str(tmp_path), world_size=2, timeout=120)
    saved = torch.load(tmp_path / "ck.pth", weights_only=True)
    for name in ("hub", "buffers", "stream"):
        expected = [{"value": f"{name} of rank {rank}"} for rank in range(2)]
        assert saved[f"{name}_ranks"] == expected, name
    for rank, values in enumerate(restored):
        assert values == {name: f"{name} of rank {rank}" for name in values}
