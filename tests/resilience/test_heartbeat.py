"""The heartbeat's place of a rank: every phase of a step is named, and a later phase of
the same step (a later hook of a stage, a wait in a collective, a validation inside
training) always orders after an earlier one, which is how the hang watchdog finds the
rank that is behind."""

from __future__ import annotations

from typing import Any

from cadence.hooks import Hook
from cadence.resilience.heartbeat import (
    BACKWARD,
    DATA,
    EVALUATOR,
    FORWARD,
    GRADIENT_SYNC,
    HOOK,
    OPTIMIZER,
    Heartbeat,
)
from cadence.runner.hook_manager import HookManager


class First(Hook):
    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        pass


class Second(First):
    pass


def test_each_phase_of_a_step_is_named_and_ordered_after_the_one_before():
    beat = Heartbeat()
    manager = HookManager(beat)
    manager.register(First())
    manager.register(Second())
    beat.start("train", first=5)
    seen: list[tuple[list[int], str]] = []

    def at(phase: int, stage: str = "", hook: Any = None) -> None:
        beat.phase, beat.stage, beat.hook = phase, stage, hook
        seen.append((beat.order(), beat.describe()))

    at(DATA)
    beat.steps += 1
    for fn in manager.stage_calls["before_train_iter"]:
        at(HOOK, "before_train_iter", fn)
    for phase in (FORWARD, BACKWARD, GRADIENT_SYNC, OPTIMIZER):
        at(phase)
    at(HOOK, "after_train_iter")
    with beat.busy("saving a checkpoint"):
        at(HOOK, "after_train_iter")
        with beat.waiting("a barrier"):
            at(HOOK, "after_train_iter")
    with beat.loop("val"):  # a validation inside the step's after-hooks
        at(DATA)
        beat.steps += 1
        at(FORWARD)
        at(EVALUATOR)
    beat.steps += 1
    at(DATA)
    orders = [order for order, _ in seen]
    assert orders == sorted(orders) and len({tuple(o) for o in orders}) == len(orders)
    assert [said for _, said in seen] == [
        "waiting for the data of iteration 5",
        "in iteration 5, in hook First.before_train_iter",
        "in iteration 5, in hook Second.before_train_iter",
        "in iteration 5, forward pass",
        "in iteration 5, backward pass",
        "in iteration 5, backward pass done, waiting for the gradients' all-reduce",
        "in iteration 5, optimizer step",
        "in iteration 5, in hook after_train_iter",
        "in iteration 5, in hook after_train_iter, saving a checkpoint",
        "in iteration 5, in hook after_train_iter, saving a checkpoint, waiting for the other "
        "ranks in a barrier",
        "waiting for the data of validation batch 1",
        "in validation batch 1, forward pass (val_step)",
        "in validation batch 1, evaluator.process",
        "waiting for the data of iteration 6",
    ]


def test_a_stage_called_inside_a_hook_names_its_hook_then_gives_the_place_back():
    beat = Heartbeat()
    manager = HookManager(beat)
    seen: list[str] = []

    class Saves(Hook):
        def before_save_checkpoint(self, runner: Any, checkpoint: dict) -> None:
            seen.append(beat.describe())

    manager.register(Saves())
    beat.start("train")
    beat.steps, beat.phase, beat.stage = 1, HOOK, "after_train_iter"
    manager.call("before_save_checkpoint", None, checkpoint={})  # type: ignore[arg-type]
    assert seen == ["in iteration 1, in hook Saves.before_save_checkpoint"]
    assert (beat.phase, beat.stage) == (HOOK, "after_train_iter")
