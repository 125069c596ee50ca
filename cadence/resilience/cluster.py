"""What the launcher says about this attempt of a job: restarts, job identity, SLURM requeue.

torchrun (``--max-restarts N``) starts the ranks again after a failure and counts
the attempts in ``TORCHELASTIC_RESTART_COUNT``; SLURM counts a requeued batch job's
starts in ``SLURM_RESTART_COUNT``. Both keep an identity across attempts
(``TORCHELASTIC_RUN_ID``, ``SLURM_JOB_ID``), which tells an earlier attempt of
this job from another job.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass

#: (identity variable, restart-count variable) of each launcher that restarts jobs
RESTARTING_LAUNCHERS = (
    ("SLURM_JOB_ID", "SLURM_RESTART_COUNT"),
    ("TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT"),
)
#: run ids that name no job in particular (torchrun's default ``--rdzv-id``)
_ANONYMOUS = ("", "none")


def _count(text: str | None) -> int:
    try:
        return max(int(text or 0), 0)
    except ValueError:
        return 0


@dataclass(frozen=True)
class Attempt:
    """This attempt of the job: per launcher, ``(job identity, restarts so far)``.

    ``counts`` holds the restart count of each launcher that set one
    (``{'TORCHELASTIC_RESTART_COUNT': 1}``); ``jobs`` the identity that launcher
    gives the job across restarts (``{'TORCHELASTIC_RESTART_COUNT': '<run id>'}``),
    where it has a specific one.
    """

    counts: dict[str, int]
    jobs: dict[str, str]

    @property
    def restarted(self) -> bool:
        """Whether a launcher started this job again (a restart count above 0)."""
        return any(self.counts.values())

    def describe(self) -> str:
        """The counts above 0, e.g. ``'TORCHELASTIC_RESTART_COUNT=1'``."""
        return ", ".join(f"{name}={n}" for name, n in self.counts.items() if n)

    def as_record(self) -> dict[str, list[object]]:
        """A JSON-able form (kept in the work-dir lock)."""
        return {name: [self.jobs.get(name), n] for name, n in self.counts.items()}

    @classmethod
    def merged(cls, attempts: list[Attempt]) -> Attempt:
        """The attempt as the whole group sees it: per launcher, the highest count of any
        process (torchrun's agents count restarts per machine, not always alike)."""
        counts: dict[str, int] = {}
        jobs: dict[str, str] = {}
        for attempt in attempts:
            for name, n in attempt.counts.items():
                counts[name] = max(n, counts.get(name, 0))
            for name, job in attempt.jobs.items():
                jobs.setdefault(name, job)
        return cls(counts, jobs)

    def follows(self, record: object) -> bool:
        """Whether ``record`` (an :meth:`as_record` of another process) is an earlier attempt of
        this job: the same launcher job with fewer restarts."""
        if not isinstance(record, Mapping):
            return False
        for name, count in self.counts.items():
            job, theirs = (list(record.get(name) or []) + [None, None])[:2]
            if job is not None and job == self.jobs.get(name) and isinstance(theirs, int):
                if theirs < count:
                    return True
        return False


def current_attempt(env: Mapping[str, str] | None = None) -> Attempt:
    """The restart counts and job identities the launchers left in ``env`` (os.environ)."""
    env = os.environ if env is None else env
    counts: dict[str, int] = {}
    jobs: dict[str, str] = {}
    for job_var, count_var in RESTARTING_LAUNCHERS:
        if job_var not in env and count_var not in env:
            continue
        counts[count_var] = _count(env.get(count_var))
        job = env.get(job_var, "")
        if job not in _ANONYMOUS:
            jobs[count_var] = job
    return Attempt(counts, jobs)


def slurm_job_id(env: Mapping[str, str] | None = None) -> str | None:
    """The SLURM job id when this process runs in a SLURM job, else None."""
    env = os.environ if env is None else env
    return env.get("SLURM_JOB_ID") or env.get("SLURM_JOBID") or None


class RequeueError(RuntimeError):
    """``scontrol requeue`` could not be run or refused."""


def requeue_slurm_job(job_id: str, timeout: float = 30.0) -> str:
    """Put SLURM job ``job_id`` back in the queue (``scontrol requeue``); return the command.

    The job must allow it (``sbatch --requeue``, or ``JobRequeue=1`` in slurm.conf).
    Raises :class:`RequeueError` with scontrol's message when it fails.
    """
    command = ["scontrol", "requeue", job_id]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError) as e:
        raise RequeueError(f"`{shlex.join(command)}` could not be run: {e}") from e
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip() or "no message"
        raise RequeueError(f"`{shlex.join(command)}` exited {done.returncode}: {said}")
    return shlex.join(command)


__all__ = ["Attempt", "RequeueError", "current_attempt", "requeue_slurm_job", "slurm_job_id"]
