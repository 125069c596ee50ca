"""The exception that ends a preempted run, in a module of its own: the runner catches it
without importing the preemption hook (and the optimizer package it needs)."""

from __future__ import annotations

from ..utils.exit_codes import ExitCode


class TrainingPreempted(Exception):
    """Raised after the preemption checkpoint is written; the runner ends the run cleanly."""

    def __init__(
        self, path: str, signal_name: str, seconds: float, requeued: str | None = None,
        requeue_refused: str | None = None,
    ) -> None:  # fmt: skip
        then = requeued or "start the same command with --resume (resume=True) to continue"
        super().__init__(
            f"stopped by {signal_name}: checkpoint {path} written {seconds:.2f} s after the "
            f"signal; {then}"
        )
        self.path, self.signal_name, self.seconds = path, signal_name, seconds
        #: what was requeued (SLURM), or None
        self.requeued = requeued
        #: why the requeue asked for was refused (SLURM), or None
        self.requeue_refused = requeue_refused

    @property
    def exit_code(self) -> int:
        """The process's exit code for this stop (:mod:`cadence.utils.exit_codes`)."""
        refused = self.requeue_refused is not None
        return int(ExitCode.REQUEUE_REFUSED if refused else ExitCode.PREEMPTED)


__all__ = ["TrainingPreempted"]
