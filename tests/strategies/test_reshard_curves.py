"""2 -> 3 processes at the same global batch (issue #27 trials): a DDP and an FSDP run saved
by 2 ranks (batch 3 each) and resumed on 3 (batch 2 each) train on with the loss curve,
rank by rank and iteration by iteration, and the final weights of an uninterrupted
3-process run that took the checkpoint's weights and optimizer state at that iteration,
exactly (grow_cases explains the runs). (That the restored state equals the saved one
and each sample is seen once: test_reshard.py.)"""

from __future__ import annotations

import os
import sys

import pytest

from cadence.dist.testing import run_distributed

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import grow_cases as cases  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.slow]


def _runs(tmp_path, strategy):
    root = str(tmp_path)
    run_distributed(cases.run, "save", strategy, root, world_size=2, timeout=300)
    resumed = run_distributed(cases.run, "resume", strategy, root, world_size=3, timeout=300)
    reference = run_distributed(cases.run, "reference", strategy, root, world_size=3,
                                timeout=300)  # fmt: skip
    after = list(range(cases.AT + 1, cases.ITERS + 1))
    for rank in range(3):
        assert sorted(resumed[rank]["losses"]) == after  # it resumed at the checkpoint
    return resumed, reference, after


def test_an_fsdp_run_of_two_resumed_on_three_trains_as_three_would_exactly(tmp_path):
    resumed, reference, after = _runs(tmp_path, "fsdp")
    for rank in range(3):
        curve = [resumed[rank]["losses"][i] for i in after]
        assert curve == [reference[rank]["losses"][i] for i in after], rank
    assert resumed[0]["weights"] == reference[0]["weights"]


def test_a_ddp_run_of_two_resumed_on_three_trains_as_three_would_exactly(tmp_path):
    """DDP rebuilds its gradient buckets after a process's first step; the resumed run
    builds the saving run's layout before its first one, so three ranks add up every
    gradient in the uninterrupted run's order (with the initial layout: ~1e-7 off from
    the second step after the resume)."""
    resumed, reference, after = _runs(tmp_path, "ddp")
    for rank in range(3):
        curve = [resumed[rank]["losses"][i] for i in after]
        assert curve == [reference[rank]["losses"][i] for i in after], rank
    assert resumed[0]["weights"] == reference[0]["weights"]
