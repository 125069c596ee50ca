"""The exit-code table: distinct codes, none that a shell or launcher already means, and the
rule that gives one code to a job of several processes."""

from __future__ import annotations

from cadence.utils.exit_codes import MEANINGS, ExitCode, job_code


def test_every_code_is_distinct_documented_and_clear_of_the_shells_codes():
    codes = [int(code) for code in ExitCode]
    assert len(set(codes)) == len(codes)
    assert set(MEANINGS) == set(ExitCode)
    assert all(code < 126 for code in codes)  # 126/127: cannot run/not found; 128+N: signal N


def test_a_job_exits_with_the_highest_code_of_its_processes():
    assert job_code([75, 76], launcher_code=1) == ExitCode.REQUEUE_REFUSED  # rank 0 requeues
    assert job_code([75, 75], launcher_code=1) == ExitCode.PREEMPTED
    assert job_code([], launcher_code=143) == 143  # none reported: what the launcher said
    assert job_code([0, 0], launcher_code=1) == 1  # the launcher failed after its ranks
