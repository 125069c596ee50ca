"""The Hook base class: stages, helpers and priorities."""

from __future__ import annotations

import pytest
from runner_double import StandInRunner

from cadence.hooks import Hook, Priority, get_priority


class OnlyAfterIter(Hook):
    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        pass


def test_implemented_stages_lists_only_overrides():
    assert OnlyAfterIter().implemented_stages() == ["after_train_iter"]
    assert Hook().implemented_stages() == []


class EveryModeIter(Hook):
    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def _after_iter(self, runner, batch_idx, data_batch=None, outputs=None, mode="train"):
        self.seen.append((mode, batch_idx))


def test_an_every_mode_override_runs_at_the_three_stages():
    hook = EveryModeIter()
    assert hook.implemented_stages() == ["after_train_iter", "after_val_iter", "after_test_iter"]
    assert hook.get_triggered_stages() == hook.implemented_stages()
    hook.after_train_iter(None, 3)
    hook.after_test_iter(None, 1, {}, {})
    assert hook.seen == [("train", 3), ("test", 1)]


def test_every_n_helpers_count_from_one():
    hook = Hook()
    runner = StandInRunner(epoch=1, iter=9, max_epochs=2, max_iters=10)
    assert hook.every_n_epochs(runner, 2)  # second epoch finishing
    assert not hook.every_n_epochs(runner, 3)
    assert hook.every_n_train_iters(runner, 5)  # tenth iteration finishing
    assert not hook.every_n_train_iters(runner, 3)
    assert hook.every_n_train_iters(runner, 4, start=2)  # 8 iterations since start 2
    assert hook.every_n_inner_iters(3, 4) and not hook.every_n_inner_iters(2, 4)
    assert hook.end_of_epoch([0] * 5, 4) and not hook.end_of_epoch([0] * 5, 3)
    assert hook.is_last_train_epoch(runner) and hook.is_last_train_iter(runner)
    assert not hook.every_n_epochs(runner, 0)


@pytest.mark.parametrize(
    ("given", "expected"),
    [("HIGHEST", 0), ("low", 70), (Priority.VERY_LOW, 90), (42, 42), ("NORMAL", 50)],
)
def test_priorities_by_name_enum_or_number(given, expected):
    assert get_priority(given) == expected


def test_bad_priorities_are_explained():
    with pytest.raises(ValueError, match="Did you mean 'NORMAL'"):
        get_priority("NORMEL")
    with pytest.raises(ValueError, match="between 0 and 100"):
        get_priority(101)
    with pytest.raises(TypeError, match="priority must be an integer or Priority enum value"):
        get_priority(1.5)  # type: ignore[arg-type]  (mmengine's phrase, its tests match it)


def test_state_only_for_hooks_with_memory():
    class Memory(Hook):
        def state_dict(self):
            return {"n": 1}

    assert Memory().has_state() and not Hook().has_state()
