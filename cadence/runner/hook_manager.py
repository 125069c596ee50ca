"""Hooks of a run, ordered by priority and dispatched per stage."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..hooks import Hook, get_priority
from ..registry import HOOKS

if TYPE_CHECKING:
    from .protocol import RunnerProtocol

#: Argument names of the stages the loops call by position, in order.
POSITIONAL_ARGS = {
    "before_train_iter": ("batch_idx", "data_batch"),
    "after_train_iter": ("batch_idx", "data_batch", "outputs"),
    "before_val_iter": ("batch_idx", "data_batch"),
    "after_val_iter": ("batch_idx", "data_batch", "outputs"),
    "before_test_iter": ("batch_idx", "data_batch"),
    "after_test_iter": ("batch_idx", "data_batch", "outputs"),
}


def _positional_call(fn: Callable[..., Any], names: tuple[str, ...]) -> Callable[..., Any]:
    """``fn`` itself when it takes ``names`` by position after the runner, else an
    adapter passing them by keyword (a user hook may declare ``(runner, **kwargs)``)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(params) > len(names) and all(p.kind in positional for p in params[: len(names) + 1]):
        if [p.name for p in params[1 : len(names) + 1]] == list(names):
            return fn
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return fn

    def by_keyword(runner: RunnerProtocol, *args: Any) -> Any:
        return fn(runner, **dict(zip(names, args)))

    return by_keyword


class _Entry:
    __slots__ = ("name", "hook", "priority", "fn")

    def __init__(self, name: str, hook: Hook, priority: int, fn: Callable[..., Any]) -> None:
        self.name, self.hook, self.priority, self.fn = name, hook, priority, fn


class HookManager:
    """Holds the hooks in priority order (stable for equal priorities).

    Each stage keeps the list of hooks whose class overrides it, so calling a
    stage costs nothing for hooks that ignore it.
    """

    def __init__(self) -> None:
        self._hooks: list[tuple[int, int, str, Hook]] = []
        self._table: dict[str, list[_Entry]] = {stage: [] for stage in Hook.stages}
        self._calls: dict[str, tuple[Callable[..., Any], ...]] = {s: () for s in Hook.stages}
        self._positional: dict[str, tuple[Callable[..., Any], ...]] = {
            s: () for s in POSITIONAL_ARGS
        }

    def __len__(self) -> int:
        return len(self._hooks)

    @property
    def hooks(self) -> list[Hook]:
        """Hooks in the order they run."""
        return [hook for _, _, _, hook in self._hooks]

    def named_hooks(self) -> list[tuple[str, Hook]]:
        return [(name, hook) for _, _, name, hook in self._hooks]

    def register(
        self,
        hook: Hook | Mapping[str, Any],
        priority: int | str | None = None,
        name: str | None = None,
    ) -> Hook:
        """Add a hook (or build one from a config dict, whose ``priority`` key is honoured)."""
        if isinstance(hook, Mapping):
            cfg = dict(hook)
            priority = cfg.pop("priority", priority)
            hook = HOOKS.build(cfg, key_path=f"hooks.{name}" if name else None)
        if not isinstance(hook, Hook):
            raise TypeError(f"a hook must subclass cadence.hooks.Hook, got {type(hook).__name__}")
        if priority is None:
            priority = hook.priority
        value = get_priority(priority)
        hook.priority = value
        taken = {n for _, _, n, _ in self._hooks}
        base = name or type(hook).__name__
        unique, n = base, 1
        while unique in taken:
            unique, n = f"{base}_{n}", n + 1
        self._hooks.append((value, len(self._hooks), unique, hook))
        self._hooks.sort(key=lambda item: (item[0], item[1]))
        self._rebuild()
        return hook

    def _rebuild(self) -> None:
        self._table = {stage: [] for stage in Hook.stages}
        for priority, _, name, hook in self._hooks:
            for stage in hook.implemented_stages():
                self._table[stage].append(_Entry(name, hook, priority, getattr(hook, stage)))
        self._calls = {
            stage: tuple(e.fn for e in entries) for stage, entries in self._table.items()
        }
        self._positional.update(  # updated in place: loops hold this dict (positional_calls)
            (stage, tuple(_positional_call(e.fn, names) for e in self._table[stage]))
            for stage, names in POSITIONAL_ARGS.items()
        )

    def call(self, stage: str, runner: RunnerProtocol, **kwargs: Any) -> None:
        """Run ``stage`` on every hook that implements it; errors name hook and stage."""
        calls = self._calls.get(stage)
        if calls is None:
            from ..utils import did_you_mean

            raise ValueError(f"unknown hook stage '{stage}'.{did_you_mean(stage, Hook.stages)}")
        fn = None
        try:
            for fn in calls:
                fn(runner, **kwargs)
        except Exception as exc:
            self._name_culprit(exc, stage, fn)
            raise

    def call_positional(self, stage: str, runner: RunnerProtocol, *args: Any) -> None:
        """:meth:`call` with the stage's arguments by position (``batch_idx, data_batch,
        outputs`` for iterations), which spares repacking keywords on every hook.
        Hooks whose method does not take them by position get them by keyword."""
        calls = self._positional[stage]
        fn = None
        try:
            for fn in calls:
                fn(runner, *args)
        except Exception as exc:
            self.blame(exc, stage, fn)
            raise

    @property
    def positional_calls(self) -> Mapping[str, tuple[Callable[..., Any], ...]]:
        """Per iteration stage, the functions :meth:`call_positional` calls, in order.

        The same mapping object for the life of this manager (registering a hook
        updates it), so a loop may keep it and call the hooks itself; it then
        reports a hook's error with :meth:`blame`.
        """
        return self._positional

    def blame(self, exc: BaseException, stage: str, fn: Any) -> None:
        """Note on ``exc`` which hook raised it, ``fn`` being one of
        ``positional_calls[stage]``."""
        calls = self._positional.get(stage, ())
        if fn in calls:
            self._name_culprit(exc, stage, self._calls[stage][calls.index(fn)])

    def _name_culprit(self, exc: BaseException, stage: str, fn: Any) -> None:
        entry = next((e for e in self._table.get(stage, ()) if e.fn == fn), None)
        if entry is not None and hasattr(exc, "add_note"):
            exc.add_note(f"raised by hook '{entry.name}' ({type(entry.hook).__name__}) "
                         f"at stage '{stage}'")  # fmt: skip

    def describe(self) -> str:
        """For each stage, the hooks that run there in order, with priorities."""
        lines = []
        for stage in Hook.stages:
            entries = self._table[stage]
            if entries:
                lines.append(f"{stage}:")
                lines.extend(f"  ({e.priority:<3}) {e.name}" for e in entries)
        return "\n".join(lines)

    def state_dict(self) -> dict[str, Any]:
        """States of the hooks that have memory, by hook name."""
        return {name: hook.state_dict() for _, _, name, hook in self._hooks if hook.has_state()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        names = {name: hook for _, _, name, hook in self._hooks}
        for name, sub in state.items():
            if name in names:
                names[name].load_state_dict(sub)


def merge_default_hooks(
    defaults: Mapping[str, Any], overrides: Mapping[str, Any] | None
) -> dict[str, Any]:
    """``default_hooks`` from a config over the built-in ones; ``None`` removes a hook."""
    merged = dict(defaults)
    for name, hook in (overrides or {}).items():
        merged[name] = hook
    return {name: hook for name, hook in merged.items() if hook is not None}


def as_list(value: Any) -> Sequence[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]
