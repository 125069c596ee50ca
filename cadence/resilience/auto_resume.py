"""When a run resumes by itself: ``resume='auto'`` and jobs that the launcher restarted.

A launcher that starts a failed or preempted job again (``torchrun --max-restarts``,
a requeued SLURM job) does not change the command line, so a job started without
``--resume`` would start over and overwrite its checkpoints. Auto-resume closes that
gap; it is on for ``resume='auto'`` and whenever a launcher's restart count is above 0
(:func:`cadence.resilience.cluster.current_attempt`; the ranks agree, so that a machine whose
torchrun agent did not count the restart resumes too):

* the newest verified checkpoint of the work dir wins (exactly what ``resume=True``
  takes: the ``last_checkpoint`` pointer, else the most progress), whoever wrote it;
* if the work dir holds none (the job failed before its first checkpoint), the run
  starts as configured: ``resume=True`` with ``load_from``, or a ``resume`` path,
  resumes from that file; ``load_from`` alone loads weights; otherwise it starts anew.

``resume=True`` keeps mmengine's meaning: the newest checkpoint of the work dir, or
the ``load_from`` file when one is given (resumed, not loaded as weights).
"""

from __future__ import annotations

from dataclasses import dataclass

from .cluster import Attempt, current_attempt

AUTO = "auto"


@dataclass(frozen=True)
class ResumePlan:
    """What a training run loads, from its ``resume`` and ``load_from`` settings and the attempt.

    Args:
        resume: the ``resume`` setting: False, True, ``'auto'`` or a checkpoint path.
        load_from: the ``load_from`` setting.
        attempt: the launchers' restart counts (:func:`current_attempt`).
    """

    resume: bool | str
    load_from: str | None
    attempt: Attempt

    @classmethod
    def of(cls, resume: bool | str, load_from: str | None, world_size: int = 1) -> ResumePlan:
        """The plan for this attempt, read from the environment; with ``world_size > 1`` the
        ranks agree on it (a collective): restarted if any rank's launcher restarted it."""
        attempt = current_attempt()
        if world_size > 1:
            from ..dist import all_gather_object

            attempt = Attempt.merged(all_gather_object(attempt))
        return cls(resume, load_from, attempt)

    @property
    def auto(self) -> bool:
        """Whether the work dir's newest verified checkpoint is looked for first."""
        return self.resume == AUTO or self.attempt.restarted

    @property
    def configured(self) -> bool | str:
        """The ``resume`` setting to follow when auto-resume finds no checkpoint: what the
        run would do on its first start, without searching the work dir a second time."""
        if self.resume == AUTO:
            return False
        if self.resume is True and self.load_from is None:
            return False if self.auto else True
        return self.resume

    @property
    def reason(self) -> str:
        """Why auto-resume is on, for the log."""
        if self.attempt.restarted:
            return f"restarted by the launcher ({self.attempt.describe()})"
        return "resume='auto'"

    @property
    def initialises_weights(self) -> bool:
        """Whether the model's ``init_weights`` runs before loading: unless the run is set to
        load or resume a checkpoint (with auto-resume the run may start anew, so it runs)."""
        explicit = self.resume is True or (isinstance(self.resume, str) and self.resume != AUTO)
        return not (self.load_from or explicit)


__all__ = ["AUTO", "ResumePlan"]
