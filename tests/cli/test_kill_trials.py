"""The suite's short version of the kill soak (tests/soak/kill_resume_soak.py, issue #27):
a ``torchrun --max-restarts 3`` job of 2 ranks loses one rank to a SIGKILL, restarts,
resumes by itself from its newest valid checkpoint and ends with the weights, optimizer
state, schedulers and position of an uninterrupted job, bit for bit. One kill falls
between the two micro-batches of an accumulated step (rank 1, iteration 5), one inside
a save (rank 0, the first checkpoint in place without its manifest: the restarted job
skips it and starts anew, where a first start would refuse to overwrite it)."""

from __future__ import annotations

import sys

import pytest
from kill_trials import Trial, final_state, run_job, run_trial

pytestmark = [
    pytest.mark.dist,
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="reads /proc, sends SIGKILL"),
]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("uninterrupted")
    run_job(tmp)
    return final_state(tmp / "work")


@pytest.mark.parametrize(
    "trial", [Trial(1, 5, "iter"), Trial(0, 4, "manifest")], ids=["mid_accumulation", "mid_save"]
)
def test_a_killed_rank_restarts_and_the_job_ends_bit_for_bit(tmp_path, reference, trial):
    run_trial(tmp_path, trial, reference)
