"""Hooks of a run, ordered by priority and dispatched per stage."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..hooks import Hook, get_priority
from ..registry import HOOKS


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

    def call(self, stage: str, runner: Any, **kwargs: Any) -> None:
        """Run ``stage`` on every hook that implements it; errors name hook and stage."""
        entries = self._table.get(stage)
        if entries is None:
            from ..utils import did_you_mean

            raise ValueError(f"unknown hook stage '{stage}'.{did_you_mean(stage, Hook.stages)}")
        entry = None
        try:
            for entry in entries:
                entry.fn(runner, **kwargs)
        except Exception as exc:
            if entry is not None and hasattr(exc, "add_note"):
                exc.add_note(f"raised by hook '{entry.name}' ({type(entry.hook).__name__}) "
                             f"at stage '{stage}'")  # fmt: skip
            raise

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
