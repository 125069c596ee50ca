"""A checkpoint saved mid-epoch by 2 ranks resumes on 1 and on 3 ranks with every strategy
(DDP, FSDP through DCP, DeepSpeed ZeRO-2 through its universal checkpoint): the weights and
optimizer state restored equal the saved ones bit for bit, and the rest of the epoch
trains on exactly the samples the saved run had not seen, each once."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from cadence.dist.testing import run_distributed

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reshard_cases  # noqa: E402


def _check_resumed(saved: list[dict], resumed: list[dict], name: str, world: int) -> None:
    before = saved[0][name]["state"]
    after = resumed[0][name]["state"]
    assert sorted(after) == sorted(before), name
    for key, value in before.items():
        assert np.array_equal(after[key], value), f"{name} on {world} rank(s): {key} differs"
    consumed = [i for rank in saved for i in rank[name]["seen"]]
    rest = [i for rank in resumed for i in rank[name]["seen"]]
    assert sorted(consumed + rest) == list(range(reshard_cases.SIZE)), (name, world)
    assert all(rank[name]["epoch"] == 1 for rank in resumed)  # the run completed
    warned = [w for w in resumed[0][name]["warnings"] if "another data layout" in w]
    assert len(warned) == 1 and f"{world} process(es) x 2 = {2 * world}" in warned[0]
    assert "2 process(es) x 2 = 4" in warned[0]


@pytest.mark.dist
@pytest.mark.slow
def test_every_strategy_saved_by_two_ranks_resumes_exactly_on_one_and_three(tmp_path):
    root = str(tmp_path)
    saved = run_distributed(reshard_cases.save_every_strategy, root, world_size=2, timeout=300)
    for world in (1, 3):
        resumed = run_distributed(
            reshard_cases.resume_every_strategy, root, world, world_size=world, timeout=300
        )
        for name in reshard_cases.STRATEGIES:
            _check_resumed(saved, resumed, name, world)
