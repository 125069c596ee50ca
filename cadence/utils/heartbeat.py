"""A run's heartbeat: what its loops bump as they move, for the hang watchdog to read.

The loops write a few attributes at each step boundary (no lock, no call); the
watchdog (:mod:`cadence.dist.watchdog`) reads them from its thread every few
seconds. :meth:`Heartbeat.busy` marks a long section that every rank runs
(a checkpoint save, the metric computation): while *all* ranks are in one, the
job counts as moving even though no step ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_MODES = {"train": "iteration", "val": "validation batch", "test": "test batch"}


class Heartbeat:
    """Where a process's loops are; written by the main thread, read by the watchdog."""

    __slots__ = ("busy_depth", "busy_with", "count", "mode", "position", "stepping")

    def __init__(self) -> None:
        self.count = 0  # bumped when a step begins and when it ends
        self.mode = ""  # the running loop: 'train', 'val', 'test' ('' outside loops)
        self.position = 0  # the 1-based iteration (train) or batch (val, test) of the step
        self.stepping = False  # inside the step (True) or waiting for the next batch
        self.busy_depth = 0  # nesting depth of :meth:`busy` sections
        self.busy_with = ""  # what the outermost busy section does

    @contextlib.contextmanager
    def busy(self, what: str) -> Iterator[None]:
        """Mark a long section that every rank runs (see the module doc)."""
        if not self.busy_depth:
            self.busy_with = what
        self.busy_depth += 1
        try:
            yield
        finally:
            self.busy_depth -= 1

    @contextlib.contextmanager
    def loop(self, mode: str) -> Iterator[None]:
        """Run a loop of ``mode`` (``'val'`` inside training); the position is restored after."""
        saved = self.mode, self.position, self.stepping
        self.mode, self.position, self.stepping = mode, 0, False
        try:
            yield
        finally:
            self.mode, self.position, self.stepping = saved

    def describe(self) -> str:
        """Where the loops are, e.g. ``'in iteration 4'`` or ``'waiting for the batch of
        validation batch 2'``; a busy section is named after it."""
        unit = _MODES.get(self.mode)
        if unit is None:
            where = "outside the training and evaluation loops"
        elif self.stepping:
            where = f"in {unit} {self.position}"
        else:
            where = f"waiting for the data of {unit} {self.position + 1}"
        return f"{where}, {self.busy_with}" if self.busy_depth else where


__all__ = ["Heartbeat"]
