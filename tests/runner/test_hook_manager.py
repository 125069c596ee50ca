"""HookManager: priority order, per-stage dispatch, config priorities, error notes."""

from __future__ import annotations

import pytest

from cadence.hooks import Hook
from cadence.registry import HOOKS
from cadence.runner import HookManager


class Recorder(Hook):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    def before_train(self, runner):
        self.log.append(self.name)


def test_hooks_run_in_priority_order_and_stably_for_ties():
    log: list[str] = []
    manager = HookManager()
    manager.register(Recorder("normal-1", log))
    manager.register(Recorder("low", log), priority="LOW")
    manager.register(Recorder("high", log), priority="HIGH")
    manager.register(Recorder("normal-2", log))
    manager.register(Recorder("numeric-45", log), priority=45)
    manager.call("before_train", runner=None)
    assert log == ["high", "numeric-45", "normal-1", "normal-2", "low"]


def test_config_dict_priority_overrides_class_priority():
    log: list[str] = []

    @HOOKS.register_module()
    class ConfigRecorder(Recorder):
        priority = "LOWEST"

    manager = HookManager()
    manager.register(Recorder("plain", log))
    manager.register(dict(type="ConfigRecorder", name="from-config", log=log, priority="HIGHEST"))
    manager.call("before_train", runner=None)
    assert log == ["from-config", "plain"]


def test_only_hooks_implementing_a_stage_are_called():
    calls: list[str] = []

    class AfterOnly(Hook):
        def after_train(self, runner):
            calls.append("after")

    manager = HookManager()
    manager.register(AfterOnly())
    manager.register(Hook())
    assert manager._table["before_train"] == []
    manager.call("after_train", runner=None)
    assert calls == ["after"]


def test_failing_hook_is_named_in_the_error():
    class Boom(Hook):
        def before_val(self, runner):
            raise RuntimeError("kaboom")

    manager = HookManager()
    manager.register(Boom(), name="boom")
    with pytest.raises(RuntimeError, match="kaboom") as info:
        manager.call("before_val", runner=None)
    assert any("'boom'" in note and "before_val" in note for note in info.value.__notes__)


def test_unknown_stage_warns_and_non_hook_rejected():
    manager = HookManager()
    # mmengine calls any method name on the hooks that have it, silently; a name that no
    # hook has and that is no stage is most likely misspelled: warn, once
    with pytest.warns(UserWarning, match="before_train"):
        manager.call("before_trian", runner=None)
    with pytest.raises(TypeError, match="Hook"):
        manager.register(object())  # type: ignore[arg-type]


def test_describe_lists_stages_in_order_and_state_round_trip():
    class Memory(Hook):
        def __init__(self):
            self.count = 0

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            self.count += 1

        def state_dict(self):
            return {"count": self.count}

        def load_state_dict(self, state):
            self.count = state["count"]

    manager = HookManager()
    memory = manager.register(Memory(), name="memory")
    manager.register(Recorder("r", []), name="rec", priority="HIGH")
    text = manager.describe()
    assert "after_train_iter:" in text and "memory" in text
    assert text.index("before_train:") < text.index("after_train_iter:")
    memory.count = 3
    state = manager.state_dict()
    assert state == {"memory": {"count": 3}}
    memory.count = 0
    manager.load_state_dict(state)
    assert memory.count == 3


def _run_stage(manager: HookManager, stage: str, runner, *args) -> None:
    """Call ``stage`` as the loops do: the manager's functions by position, blaming on error."""
    fn = None
    try:
        for fn in manager.stage_calls[stage]:
            fn(runner, *args)
    except Exception as exc:
        manager.blame(exc, stage, fn)
        raise


def test_stage_calls_reach_the_same_hooks_as_call_and_name_the_culprit():
    seen: list[tuple] = []

    class Iter(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            seen.append((runner, batch_idx, data_batch, outputs))

    class Boom(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            raise KeyError("bad")

    manager = HookManager()
    calls = manager.stage_calls
    manager.register(Iter(), name="first")
    _run_stage(manager, "after_train_iter", "runner", 3, "batch", {"loss": 1})
    manager.call("after_train_iter", runner="runner", batch_idx=4, data_batch="b")
    manager.call("after_train_iter", runner="runner", batch_idx=5, outputs={"loss": 2})
    assert seen == [
        ("runner", 3, "batch", {"loss": 1}),
        ("runner", 4, "b", None),
        ("runner", 5, None, {"loss": 2}),
    ]
    manager.register(Boom(), name="boom", priority="LOWEST")  # the table is rebuilt in place
    assert manager.stage_calls is calls and len(calls["after_train_iter"]) == 2
    with pytest.raises(KeyError) as info:
        _run_stage(manager, "after_train_iter", "runner", 5)
    assert any("'boom'" in note and "after_train_iter" in note for note in info.value.__notes__)
    with pytest.raises(KeyError) as info:
        manager.call("after_train_iter", runner="runner", batch_idx=6)
    assert any("'boom'" in note and "after_train_iter" in note for note in info.value.__notes__)
    assert len(seen) == 5


def test_call_passes_arguments_by_position_to_every_stage():
    seen: list[tuple] = []

    class Epoch(Hook):
        def after_val_epoch(self, runner, metrics=None):
            seen.append(("val", metrics))

        def before_save_checkpoint(self, runner, checkpoint):
            seen.append(("save", checkpoint))

    class Kwargs(Hook):
        def after_val_epoch(self, runner, **kwargs):
            seen.append(("kwargs", kwargs))

        def before_save_checkpoint(self, runner, *args, **kwargs):
            seen.append(("args+kwargs", args, kwargs))

    manager = HookManager()
    manager.register(Epoch())
    manager.register(Kwargs())
    manager.call("after_val_epoch", runner=None, metrics={"acc": 1.0})
    manager.call("after_val_epoch", runner=None)
    manager.call("before_save_checkpoint", runner=None, checkpoint={"meta": 1})
    assert seen == [
        ("val", {"acc": 1.0}),
        ("kwargs", {"metrics": {"acc": 1.0}}),
        ("val", None),
        ("kwargs", {}),
        ("save", {"meta": 1}),
        ("args+kwargs", (), {"checkpoint": {"meta": 1}}),  # mmengine passes keywords
    ]


def test_call_with_arguments_a_stage_does_not_list_passes_them_as_given():
    class Strict(Hook):
        def after_val_epoch(self, runner, metrics=None):
            raise AssertionError("not reached")

    manager = HookManager()
    manager.register(Strict(), name="strict")
    with pytest.raises(TypeError, match="unexpected keyword argument 'extra'") as info:
        manager.call("after_val_epoch", runner=None, extra=1)
    assert any("'strict'" in note and "after_val_epoch" in note for note in info.value.__notes__)


def test_runner_call_hook_goes_through_stage_calls(tmp_path):
    from cadence.runner import Runner

    seen: list[tuple] = []

    class Iter(Hook):
        def before_train_iter(self, runner, batch_idx, data_batch=None):
            seen.append((runner, batch_idx, data_batch))

    from cadence.runner import DEFAULT_HOOKS

    no_defaults = dict.fromkeys(DEFAULT_HOOKS)  # the defaults are registered at construction
    runner = Runner(model=dict(type="Net"), work_dir=str(tmp_path), default_hooks=no_defaults)
    runner.register_hook(Iter())
    assert len(runner.stage_calls["before_train_iter"]) == 1
    runner.call_hook("before_train_iter", batch_idx=2, data_batch={"x": 1})
    for fn in runner.stage_calls["before_train_iter"]:
        fn(runner, 3, None)
    assert seen == [(runner, 2, {"x": 1}), (runner, 3, None)]


def test_positional_calls_reach_hooks_declared_with_keywords_only():
    """mmengine passes iteration arguments by keyword; hooks written as ``(runner, **kwargs)``
    or with keyword-only parameters must keep working under positional dispatch."""
    seen = []

    class KwargsHook(Hook):
        def after_train_iter(self, runner, **kwargs):
            seen.append(("kwargs", kwargs))

    class KeywordOnlyHook(Hook):
        def after_train_iter(self, runner, *, batch_idx, data_batch=None, outputs=None):
            seen.append(("kwonly", batch_idx, data_batch, outputs))

    class PlainHook(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            seen.append(("plain", batch_idx, data_batch, outputs))

    class ArgsOnlyHook(Hook):
        def after_train_iter(self, runner, *args):
            seen.append(("args", args))

    class BrokenKwargsHook(Hook):
        def before_train_iter(self, runner, **kwargs):
            raise RuntimeError("boom")

    manager = HookManager()
    for hook in (KwargsHook(), KeywordOnlyHook(), PlainHook(), ArgsOnlyHook(), BrokenKwargsHook()):
        manager.register(hook)
    _run_stage(manager, "after_train_iter", None, 3, "batch", {"loss": 1})
    assert seen == [
        ("kwargs", {"batch_idx": 3, "data_batch": "batch", "outputs": {"loss": 1}}),
        ("kwonly", 3, "batch", {"loss": 1}),
        ("plain", 3, "batch", {"loss": 1}),
        ("args", (3, "batch", {"loss": 1})),
    ]
    with pytest.raises(RuntimeError) as info:
        _run_stage(manager, "before_train_iter", None, 0, None)
    assert "BrokenKwargsHook" in "".join(getattr(info.value, "__notes__", []))
