"""What the kill trials' ranks import (``custom_imports``): a hook that SIGKILLs its own
process at one planned point of the first attempt of a torchrun job.

``KillAt(rank, at, where)`` kills rank ``rank`` when ``where`` is

* ``'iter'``: right after iteration ``at`` (1-based) ends; with accumulation over 2
  an odd ``at`` falls between the two micro-batches of an optimizer step (its
  gradients accumulated, no step taken), an even one right after a step;
* ``'collect'``: inside the save of ``iter_<at>.pth``, after the run's state was
  gathered and before anything is written (every rank saves; rank 0 writes);
* ``'manifest'``: inside that save, with the main file renamed into place and its
  manifest not yet written (rank 0, the writer);
* ``'pointer'``: inside that save, with file and manifest in place and
  ``last_checkpoint`` not yet moved (rank 0).

The save-path kills wrap cadence's own functions in this process only (no fake
collectives): the process dies inside the real save. A marker ``killed.rank<r>``
is written into ``marks`` just before the kill, so the trial knows it happened.
Only attempt 0 (``TORCHELASTIC_RESTART_COUNT=0``) kills, so the restarted job runs on.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from signal_toys import touch

from cadence.checkpoint import files, manager
from cadence.hooks import Hook
from cadence.registry import HOOKS

WHERE = ("iter", "collect", "manifest", "pointer")
#: where the writer (rank 0) alone can be killed
WRITER_ONLY = ("manifest", "pointer")


def _die(marks: str, rank: int) -> None:
    touch(marks, f"killed.rank{rank}")
    os.kill(os.getpid(), signal.SIGKILL)


@HOOKS.register_module()
class KillAt(Hook):
    """SIGKILL this process at the planned point (module docstring)."""

    priority = "HIGHEST"  # before the checkpoint hook saves iteration `at`

    def __init__(self, marks: str, rank: int, at: int, where: str = "iter") -> None:
        if where not in WHERE:
            raise ValueError(f"KillAt.where must be one of {WHERE}, got {where!r}")
        if where in WRITER_ONLY and rank != 0:
            raise ValueError(f"KillAt(where={where!r}) kills the writer: rank 0")
        self.marks, self.rank, self.at, self.where = marks, rank, at, where

    def _armed(self, runner: Any) -> bool:
        attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
        return attempt == 0 and runner.rank == self.rank

    def before_train(self, runner: Any) -> None:
        if self._armed(runner) and self.where != "iter":
            self._arm_save(f"iter_{self.at}.pth")

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        # priority HIGHEST: this runs before the checkpoint hook's save of iteration `at`
        if self.where == "iter" and self._armed(runner) and runner.iter + 1 == self.at:
            _die(self.marks, self.rank)

    def _arm_save(self, name: str) -> None:
        marks, rank = self.marks, self.rank

        def target(path: Any) -> bool:
            return os.path.basename(str(path)) == name

        if self.where == "collect":
            save = manager.CheckpointManager.save

            def save_then_die(this: Any, path: str, *args: Any, **kwargs: Any) -> str:
                if target(path):  # the parts are collected, nothing is written yet
                    _die(marks, rank)
                return save(this, path, *args, **kwargs)

            manager.CheckpointManager.save = save_then_die  # type: ignore[method-assign]
        elif self.where == "manifest":
            write_manifest = files.write_manifest

            def manifest_or_die(info: Any, filename: str) -> None:
                if target(filename):
                    _die(marks, rank)
                write_manifest(info, filename)

            files.write_manifest = manifest_or_die
        else:
            pointer = manager.write_last_checkpoint

            def pointer_or_die(work_dir: str, path: str, *args: Any, **kwargs: Any) -> Any:
                if target(path):
                    _die(marks, rank)
                return pointer(work_dir, path, *args, **kwargs)

            manager.write_last_checkpoint = pointer_or_die
