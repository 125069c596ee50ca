"""Two gloo ranks (DDP), each streaming its own shard of a resumable stream: a fresh runner
resumes mid-epoch from a checkpoint and ends bitwise equal to an uninterrupted run.

The ranks stream shards of different contents and lengths, so at the checkpoint they stand at
different places. The test fails where a rank resumes with another rank's stream state
(checked by making every rank load rank 0's ``data_stream`` state: rank 1's batches after
the resume, and both ranks' final weights, then differ from the uninterrupted run's).
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import torch
from stream_toys import Net, Seen
from torch.utils.data import IterableDataset

from cadence import dist
from cadence.dist.testing import run_distributed
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner

pytestmark = pytest.mark.dist

LENGTH = {0: 7, 1: 13}  # items in each rank's shard
BATCH, ITERS, RESUME_AT = 4, 7, 3


class RankShard(IterableDataset):
    """This rank's shard: ``LENGTH[rank]`` points of its own, item ids ``100 * rank + k``.
    State: the items yielded."""

    def __init__(self) -> None:
        self.rank = dist.get_rank()
        n = LENGTH[self.rank]
        g = torch.Generator().manual_seed(self.rank)
        self.points, self.labels = torch.randn(n, 4, generator=g), torch.randint(0, 2, (n,))
        self._start = self._yielded = 0

    def __iter__(self) -> Any:
        start, self._start = self._start, 0
        self._yielded = start
        for k in range(start, len(self.labels)):
            self._yielded += 1
            yield {"inputs": self.points[k], "data_samples": self.labels[k],
                   "i": 100 * self.rank + k}  # fmt: skip

    def state_dict(self) -> dict[str, int]:
        return {"yielded": self._yielded}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self._start = state["yielded"]


def _train(work_dir: str, resume: Any = False) -> tuple[list[list[int]], dict]:
    """Train ``ITERS`` iterations under DDP, saving every 3; the batches and final weights."""
    runner = Runner(**dict(
        model=dict(type="Net"), work_dir=work_dir, launcher="pytorch",
        strategy=dict(type="DDPStrategy"),
        train_dataloader=dict(dataset=dict(type="RankShard"), batch_size=BATCH,
                              collate_fn=dict(type="default_collate")),
        train_cfg=dict(type="IterBasedTrainLoop", max_iters=ITERS),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1, momentum=0.9)),
        default_hooks=dict(logger=dict(type="LoggerHook", progress="off"),
                           checkpoint=dict(type="CheckpointHook", interval=3, by_epoch=False)),
        randomness=dict(seed=3), log_level="WARNING", resume=resume,
    ))  # fmt: skip
    seen = Seen()
    runner.register_hook(seen)
    runner.train()
    model = runner.strategy.unwrap(runner.model)
    # as bytes: bitwise, and tensors would travel to the parent through this process's fds
    weights = {k: v.numpy().tobytes() for k, v in model.state_dict().items()}
    return seen.batches, weights


def _full_then_resumed(root: str) -> dict[str, Any]:
    """In each rank: an uninterrupted run, then a fresh runner resuming its checkpoint."""
    DATASETS.register_module(module=RankShard, force=True)
    MODELS.register_module(module=Net, force=True)
    full = os.path.join(root, "full")
    seen, weights = _train(full)
    checkpoint = os.path.join(full, f"iter_{RESUME_AT}.pth")
    rest, resumed = _train(os.path.join(root, "resumed"), resume=checkpoint)
    return dict(seen=seen, weights=weights, rest=rest, resumed=resumed)


def test_each_rank_resumes_its_own_stream_mid_epoch_exactly(tmp_path):
    ranks = run_distributed(_full_then_resumed, str(tmp_path), world_size=2, timeout=120)
    epochs = {0: [[0, 1, 2, 3], [4, 5, 6]], 1: [[100, 101, 102, 103], [104, 105, 106, 107],
                                               [108, 109, 110, 111], [112]]}  # fmt: skip
    for rank, out in enumerate(ranks):
        assert out["seen"] == (epochs[rank] * ITERS)[:ITERS], rank  # each rank its own shard
        assert out["rest"] == out["seen"][RESUME_AT:], rank
        assert out["resumed"] == out["weights"], rank  # bitwise
    assert ranks[0]["resumed"] == ranks[1]["resumed"]  # DDP keeps the ranks equal
    saved = torch.load(tmp_path / f"full/iter_{RESUME_AT}.pth", weights_only=False)
    # after 3 batches rank 0 is 1 batch into its second pass, rank 1 near its first's end
    assert [s["workers"] for s in saved["data_stream_ranks"]] == [
        {0: {"yielded": 4}}, {0: {"yielded": 12}},
    ]  # fmt: skip
