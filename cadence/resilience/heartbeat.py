"""A run's heartbeat: where its loops are, for the hang watchdog to read.

A loop adds 1 to :attr:`Heartbeat.steps` when a step (an iteration, a validation
batch) begins and 1 when it ends. Inside a step, the code that runs it writes
the phase it enters into :attr:`Heartbeat.phase` (a small int, one of the
constants below): the loops and the hook manager for the hooks (and the function
of the hook that runs, in :attr:`Heartbeat.hook`) and the forward pass, the
optimizer wrapper for the backward pass and the optimizer step, DDP's wrapper for
the end of the local backward pass. Each mark is an attribute write: no call, no
lock, no allocation. The watchdog (:mod:`cadence.resilience.watchdog`) reads
the heartbeat from its thread every few seconds, and compares the ranks by
:meth:`Heartbeat.order` (steps, then the phase within the step, then the hook).
The training loop, whose steps are the shortest, marks them only while a watchdog
watches (:attr:`Heartbeat.watchers`); it runs a step without any mark otherwise.

:meth:`Heartbeat.busy` marks a long section that every rank runs (a checkpoint
save, the metric computation): while *all* ranks are in one, the job counts as
moving even though no step ends. :meth:`Heartbeat.waiting` marks a collective
that cadence itself calls: at the same place, a rank that waits there for the
others is ahead of one that does not.

The loop running in this process makes its heartbeat :data:`current` (what the
optimizer wrappers, DDP's wrapper and cadence's collectives, which do not know the
runner, write to).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

#: Phases of a step, written to :attr:`Heartbeat.phase`.
DATA = 0  # between steps: fetching the next step's data (the loops' own work)
HOOK = 1  # a hook's function at :attr:`Heartbeat.stage` (:attr:`Heartbeat.hook`)
FORWARD = 2  # the model's train/val/test step until the backward pass
BACKWARD = 3  # the backward pass
GRADIENT_SYNC = 4  # the backward pass computed every gradient; it waits for the all-reduce
OPTIMIZER = 5  # the optimizer step (gradient clipping, step, zero_grad)
EVALUATOR = 6  # the evaluator's ``process`` of a validation/test batch

_UNITS = {"train": "iteration", "val": "validation batch", "test": "test batch"}
# where each phase comes in a step (hooks: by stage, see _rank)
_RANK = {DATA: 0, FORWARD: 2, BACKWARD: 3, GRADIENT_SYNC: 4, OPTIMIZER: 5, EVALUATOR: 5}
_TEXT = {FORWARD: "forward pass", BACKWARD: "backward pass",
         GRADIENT_SYNC: "backward pass done, waiting for the gradients' all-reduce",
         OPTIMIZER: "optimizer step", EVALUATOR: "evaluator.process"}  # fmt: skip
_STEP_STAGES = {"before_train_iter": 1, "before_val_iter": 1, "before_test_iter": 1,
                "after_train_iter": 6, "after_val_iter": 6, "after_test_iter": 6}  # fmt: skip
_NO_HOOKS: Mapping[str, tuple[Any, ...]] = {}


class Heartbeat:
    """Where a process's loops are; written by the main thread, read by the watchdog."""

    __slots__ = ("busy_depth", "busy_with", "entries", "first", "hook", "hooks", "mode",
                 "outer", "phase", "stage", "steps", "wait_depth", "waiting_in",
                 "watchers")  # fmt: skip

    def __init__(self) -> None:
        self.steps = 0  # +1 when a step of the running loop begins, +1 when it ends
        self.first = 1  # the number of that loop's first step (a resumed run's iteration)
        self.mode = ""  # the running loop: 'train', 'val', 'test' ('' outside loops)
        self.outer: tuple[int, ...] = ()  # the enclosing loop's place (training around a val)
        self.entries = 0  # loops started so far
        self.busy_depth = 0  # nesting depth of :meth:`busy` sections
        self.busy_with = ""  # what the outermost busy section does
        self.phase = DATA  # where the step is (the module's constants)
        self.stage = ""  # the hook stage running, when ``phase`` is HOOK
        self.hook: Any = None  # the function of the hook running there
        #: per stage, the hook functions in the order they run (the hook manager's)
        self.hooks: Mapping[str, tuple[Any, ...]] = _NO_HOOKS
        self.wait_depth = 0  # nesting depth of :meth:`waiting` sections
        self.waiting_in = ""  # the collective the outermost one waits in
        #: hang watchdogs watching now: the training loop marks its steps only while one does
        self.watchers = 0

    def start(self, mode: str, first: int = 1) -> None:
        """A loop of ``mode`` starts at step number ``first`` (the outermost loop)."""
        global current
        self.mode, self.first, self.steps, self.outer = mode, first, 0, ()
        self.phase = DATA
        self.entries += 1
        current = self

    @contextlib.contextmanager
    def loop(self, mode: str) -> Iterator[None]:
        """Run a loop of ``mode`` inside the current one (or alone); the enclosing loop's
        position is restored after."""
        global current
        saved = self.mode, self.first, self.steps, self.outer, self.phase, self.stage, self.hook
        outer = self._here() if self.mode else ()
        self.start(mode)
        self.outer = outer
        try:
            yield
        finally:
            self.mode, self.first, self.steps, self.outer = saved[:4]
            self.phase, self.stage, self.hook = saved[4:]
            self.entries += 1
            current = self

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
    def waiting(self, what: str) -> Iterator[None]:
        """Mark a collective ``what`` in which this rank waits for the others."""
        if not self.wait_depth:
            self.waiting_in = what
        self.wait_depth += 1
        try:
            yield
        finally:
            self.wait_depth -= 1

    def token(self) -> tuple[int, int]:
        """Changes whenever a step begins or ends or a loop starts or ends."""
        return self.entries, self.steps

    def _here(self) -> tuple[int, int, int]:
        """(steps, the phase's place in the step, the hook's place in its stage)."""
        phase, index = self.phase, 0
        if phase == HOOK:
            rank = _STEP_STAGES.get(self.stage, 0)
            calls = self.hooks.get(self.stage, ())
            index = calls.index(self.hook) if self.hook in calls else 0
        else:
            rank = _RANK.get(phase, 0)
        return self.steps, rank, index

    def order(self) -> list[int]:
        """How far the loops are, comparable between ranks (a rank with a smaller order is
        behind): the outermost loop's place (steps, phase, hook), then the place of a loop
        inside it (or -1s), then whether it is busy and whether it waits in a collective."""
        places = [*self.outer, *self._here()] if self.outer else [*self._here(), -1, -1, -1]
        return [*places, int(self.busy_depth > 0), int(self.wait_depth > 0)]

    def describe(self) -> str:
        """Where the loops are, e.g. ``'in iteration 4, backward pass'``, ``'waiting for the
        data of validation batch 2'``; a busy section and a collective are named after it."""
        unit = _UNITS.get(self.mode)
        number = self.first + self.steps // 2
        if unit is None:
            where = "outside the training and evaluation loops"
        elif self.steps % 2:
            where = f"in {unit} {number}"
            doing = self._doing()
            if doing:
                where = f"{where}, {doing}"
        elif self.phase == HOOK:
            where = f"before {unit} {number}, in hook {self._hook_name()}"
        elif self.phase == DATA:
            where = f"waiting for the data of {unit} {number}"
        else:  # after the loop's last step (computing the metrics)
            where = f"after {unit} {number - 1}"
        if self.busy_depth:
            where = f"{where}, {self.busy_with}"
        if self.wait_depth:
            where = f"{where}, waiting for the other ranks in {self.waiting_in}"
        return where

    def _doing(self) -> str:
        if self.phase == HOOK:
            return f"in hook {self._hook_name()}"
        text = _TEXT.get(self.phase, "")
        if self.phase == FORWARD and self.mode != "train":
            text = f"{text} ({self.mode}_step)"
        return text

    def _hook_name(self) -> str:
        """``'CheckpointHook.after_train_iter'``: the running hook's class and stage."""
        if self.hook is None:
            return self.stage
        fn = getattr(self.hook, "__wrapped__", self.hook)
        owner = getattr(fn, "__self__", None)
        if owner is not None:
            name = type(owner).__name__
        else:  # a plain function: its qualified name without the function's own
            name = str(getattr(fn, "__qualname__", "?")).rsplit(".", 1)[0]
        return f"{name}.{self.stage}"


#: The heartbeat of the loop running in this process (the last one started).
current = Heartbeat()


__all__ = ["BACKWARD", "DATA", "EVALUATOR", "FORWARD", "GRADIENT_SYNC", "HOOK", "OPTIMIZER",
           "Heartbeat", "current"]  # fmt: skip
