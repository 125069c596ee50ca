"""What a ``resume=True`` run tries, and what it says when a checkpoint fails.

:meth:`CheckpointManager.candidates <cadence.checkpoint.CheckpointManager.candidates>`
lists the work dir's checkpoints newest first; the caller (the runner, which calls its
``after_load_checkpoint`` hooks between reading one and restoring it) tries them in
order and reports each outcome here: :meth:`ResumeSearch.skip` for one that failed,
:meth:`ResumeSearch.resumed` for the one it resumed from, :meth:`ResumeSearch.exhausted`
when none was left.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from .files import CheckpointError

#: What a checkpoint that cannot be used raises while it is read or restored (a missing
#: shard folder is a FileNotFoundError).
UNUSABLE: tuple[type[BaseException], ...] = (CheckpointError, FileNotFoundError)


class ResumeSearch:
    """One search of a work dir for the checkpoint to resume from.

    ``paths``: to try, newest first. ``unverified``: checkpoints without a manifest,
    skipped already. ``skippable=False``: a failure of the one path offered (a foreign
    work dir's unverified target) stops the run instead of being skipped.
    """

    def __init__(
        self,
        work_dir: str,
        logger: logging.Logger,
        paths: Sequence[str],
        unverified: Sequence[str],
        *,
        skippable: bool = True,
    ) -> None:
        self.work_dir = work_dir
        self.logger = logger
        self.paths = list(paths)
        self.unverified = list(unverified)
        self.skippable = skippable
        self.skipped: list[str] = []

    def skip(self, path: str, error: BaseException) -> bool:
        """Record that ``path`` failed with ``error`` (warned); False where the search
        may not skip it (the caller re-raises)."""
        if not self.skippable:
            return False
        self.logger.warning(f"Skipping checkpoint {path}: {error}")
        self.skipped.append(path)
        return True

    def resumed(self, path: str) -> None:
        """The run resumed from ``path``: say which newer ones it passed over."""
        if self.skipped or self.unverified:
            self.logger.warning(
                f"Resumed from {path}, the newest valid checkpoint; skipped "
                f"{self.skipped + self.unverified}"
            )

    def exhausted(self, *, restarted: bool = False) -> None:
        """No checkpoint could be resumed from. Where the work dir holds none, the run
        starts anew (returns). Where it holds some that all failed, stop the run
        (:class:`CheckpointError`) rather than let a new run overwrite them -- unless the
        launcher ``restarted`` this job: then they are its previous attempt's unfinished
        saves (killed before the manifest), and the job starts anew (warned)."""
        failed = self.skipped + self.unverified
        if restarted and failed:
            self.logger.warning(
                f"No checkpoint in {self.work_dir} verifies; {failed}: left by the previous "
                "attempt of this restarted job, killed while saving"
            )
            return
        if self.unverified:
            raise CheckpointError(
                f"resume=True: the checkpoints in {self.work_dir} could not be verified "
                f"({', '.join(failed)}: no manifest, or damaged), and a new run would "
                "overwrite them. Resume from one explicitly (--resume PATH, or "
                "resume='PATH' in the config: it loads with a warning), or start in a new "
                "work dir (--work-dir)"
            )
        if self.skipped:
            raise CheckpointError(
                f"resume=True: none of the checkpoints in {self.work_dir} can be used "
                f"({', '.join(self.skipped)}); see the warnings above for why"
            )
