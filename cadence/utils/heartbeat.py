"""A run's heartbeat: what its loops bump as they move, for the hang watchdog to read.

A loop adds 1 to :attr:`Heartbeat.steps` when a step (an iteration, a validation
batch) begins and 1 when it ends: two integer writes per step, no lock, no call.
The watchdog (:mod:`cadence.dist.watchdog`) reads the heartbeat from its thread
every few seconds. :meth:`Heartbeat.busy` marks a long section that every rank
runs (a checkpoint save, the metric computation): while *all* ranks are in one,
the job counts as moving even though no step ends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

_UNITS = {"train": "iteration", "val": "validation batch", "test": "test batch"}


class Heartbeat:
    """Where a process's loops are; written by the main thread, read by the watchdog."""

    __slots__ = ("busy_depth", "busy_with", "entries", "first", "mode", "outer", "steps")

    def __init__(self) -> None:
        self.steps = 0  # +1 when a step of the running loop begins, +1 when it ends
        self.first = 1  # the number of that loop's first step (a resumed run's iteration)
        self.mode = ""  # the running loop: 'train', 'val', 'test' ('' outside loops)
        self.outer = -1  # the enclosing loop's steps (training around a validation), or -1
        self.entries = 0  # loops started so far
        self.busy_depth = 0  # nesting depth of :meth:`busy` sections
        self.busy_with = ""  # what the outermost busy section does

    def start(self, mode: str, first: int = 1) -> None:
        """A loop of ``mode`` starts at step number ``first`` (the outermost loop)."""
        self.mode, self.first, self.steps, self.outer = mode, first, 0, -1
        self.entries += 1

    @contextlib.contextmanager
    def loop(self, mode: str) -> Iterator[None]:
        """Run a loop of ``mode`` inside the current one (or alone); the enclosing loop's
        position is restored after."""
        saved = self.mode, self.first, self.steps, self.outer
        outer = self.steps if self.mode else -1
        self.start(mode)
        self.outer = outer
        try:
            yield
        finally:
            self.mode, self.first, self.steps, self.outer = saved
            self.entries += 1

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

    def token(self) -> tuple[int, int]:
        """Changes whenever a step begins or ends or a loop starts or ends."""
        return self.entries, self.steps

    def order(self) -> list[int]:
        """How far the loops are, comparable between ranks: ``[steps, -1]`` in the outermost
        loop, ``[enclosing loop's steps, steps]`` in a validation inside training."""
        return [self.steps, -1] if self.outer < 0 else [self.outer, self.steps]

    def describe(self) -> str:
        """Where the loops are, e.g. ``'in iteration 4'`` or ``'waiting for the data of
        validation batch 2'``; a busy section is named after it."""
        unit = _UNITS.get(self.mode)
        number = self.first + self.steps // 2
        if unit is None:
            where = "outside the training and evaluation loops"
        elif self.steps % 2:
            where = f"in {unit} {number}"
        else:
            where = f"waiting for the data of {unit} {number}"
        return f"{where}, {self.busy_with}" if self.busy_depth else where


__all__ = ["Heartbeat"]
