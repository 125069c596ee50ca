"""Whether a preempted run puts its SLURM job back in the queue (``scontrol requeue``).

SLURM sends the signal of ``sbatch --signal=USR1@90`` (or ``B:USR1@90``) a while
before the time limit; the preemption hook then saves, and with this policy the run
also requeues its job so that it starts again, where auto-resume
(``SLURM_RESTART_COUNT`` > 0) continues from that checkpoint.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cluster import RequeueError, requeue_slurm_job, slurm_job_id

REQUEUE_MODES = ("auto", True, False)


class SlurmRequeue:
    """The ``requeue`` setting of :class:`~cadence.hooks.PreemptionHook`.

    Args:
        mode: ``'auto'``: requeue when the process runs in a SLURM job and the signal
            was SIGUSR1 (SIGTERM means the job is being cancelled, or SLURM
            requeues it itself); ``True``: requeue on any caught signal under SLURM;
            ``False``: never.
    """

    def __init__(self, mode: bool | str = "auto") -> None:
        if mode not in REQUEUE_MODES or isinstance(mode, int) and not isinstance(mode, bool):
            raise ValueError(f"PreemptionHook.requeue must be 'auto', True or False, got {mode!r}")
        self.mode = mode
        #: why the last requeue asked for was refused (None: none was, or it worked)
        self.refused: str | None = None

    def job_to_requeue(self, signal_name: str, env: Mapping[str, str] | None = None) -> str | None:
        """The SLURM job id to requeue after ``signal_name`` stopped the run, or None."""
        if self.mode is False:
            return None
        if self.mode == "auto" and signal_name != "SIGUSR1":
            return None
        return slurm_job_id(env)

    def after_save(self, signal_name: str, logger: Any) -> str | None:
        """Requeue the job if the policy says so; return a sentence for the stop message
        (None when nothing was requeued). Failures are logged, never raised: the
        checkpoint is written and the run still ends cleanly, with
        :attr:`ExitCode.REQUEUE_REFUSED <cadence.utils.exit_codes.ExitCode>` (see
        :attr:`refused`)."""
        self.refused = None
        job = self.job_to_requeue(signal_name)
        if job is None:
            if self.mode is True:
                logger.warning("PreemptionHook(requeue=True): not in a SLURM job (no "
                               "SLURM_JOB_ID), so nothing was requeued")  # fmt: skip
            return None
        try:
            command = requeue_slurm_job(job)
        except RequeueError as e:
            self.refused = f"SLURM job {job} was not requeued: {e}"
            logger.error(f"PreemptionHook: SLURM job {job} was not requeued: {e}. Submit it "
                         "again with --resume (or resume='auto') to continue")  # fmt: skip
            return None
        return (f"SLURM job {job} requeued ({command}); it resumes from this checkpoint when "
                "it starts again")  # fmt: skip


__all__ = ["REQUEUE_MODES", "SlurmRequeue"]
