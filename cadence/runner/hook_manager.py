"""Hooks of a run, ordered by priority and dispatched per stage."""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..hooks import Hook, get_priority
from ..registry import HOOKS, located_copy
from ..resilience.heartbeat import HOOK, Heartbeat

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


def _stage_args(stage: str) -> tuple[str, ...]:
    """The arguments ``Hook.<stage>`` takes after the runner, in order."""
    params = list(inspect.signature(getattr(Hook, stage)).parameters)
    return tuple(params[2:])  # after ``self`` and ``runner``


#: Every stage's arguments after the runner, in the order hooks receive them by position.
STAGE_ARGS: dict[str, tuple[str, ...]] = {stage: _stage_args(stage) for stage in Hook.stages}


def _positional_call(fn: Callable[..., Any], names: tuple[str, ...]) -> Callable[..., Any]:
    """``fn`` itself when it takes ``names`` by position after the runner (or only takes
    ``*args``), else an adapter passing them by keyword (a user hook may declare
    ``(runner, **kwargs)`` or keyword-only parameters, as mmengine calls by keyword)."""
    if not names:
        return fn
    func = getattr(fn, "__func__", None)  # a bound method: decided once per function
    by_position = _by_position(func, names) if func is not None else _takes(fn, names, 1)
    if by_position:
        return fn

    def by_keyword(runner: RunnerProtocol, *args: Any) -> Any:
        return fn(runner, **dict(zip(names, args)))

    by_keyword.__wrapped__ = fn  # type: ignore[attr-defined]  # the hang report names its hook
    return by_keyword


@functools.lru_cache(maxsize=1024)
def _by_position(func: Callable[..., Any], names: tuple[str, ...]) -> bool:
    """:func:`_takes` for a method's function (its first parameter is ``self``)."""
    return _takes(func, names, 2)


def _takes(fn: Callable[..., Any], names: tuple[str, ...], first: int) -> bool:
    """Whether ``fn`` takes ``names`` by position from its parameter ``first`` (the one
    after the runner), or takes only ``*args``."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    end = first + len(names)
    if len(params) >= end and all(p.kind in positional for p in params[:end]):
        if [p.name for p in params[first:end]] == list(names):
            return True
    kinds = {p.kind for p in params}
    return inspect.Parameter.VAR_POSITIONAL in kinds and inspect.Parameter.VAR_KEYWORD not in kinds


def _as_positions(names: tuple[str, ...], kwargs: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """``kwargs`` as positional arguments of a stage taking ``names``; None unless they
    are the first ``len(kwargs)`` of those names."""
    if not kwargs:
        return ()
    count = len(kwargs)
    if count > len(names) or any(name not in kwargs for name in names[:count]):
        return None
    return tuple(kwargs[name] for name in names[:count])


class _Entry:
    __slots__ = ("name", "hook", "priority", "fn")

    def __init__(self, name: str, hook: Hook, priority: int, fn: Callable[..., Any]) -> None:
        self.name, self.hook, self.priority, self.fn = name, hook, priority, fn


class HookManager:
    """Holds the hooks in priority order (stable for equal priorities).

    For each stage it keeps the tuple of functions to call, in order, of the
    hooks whose class overrides that stage (:attr:`stage_calls`); each takes
    the runner and then the stage's arguments by position (:data:`STAGE_ARGS`).
    :meth:`call` runs them, and a loop may run them itself on its hot path;
    either way :meth:`blame` names a failing hook and its stage. ``heartbeat``
    (the runner's) learns which hook runs, for the hang watchdog.
    """

    def __init__(self, heartbeat: Heartbeat | None = None) -> None:
        self._hooks: list[tuple[int, int, str, Hook]] = []
        self._table: dict[str, list[_Entry]] = {stage: [] for stage in Hook.stages}
        #: Per stage, the functions :meth:`call` runs, in order: ``fn(runner, *args)`` with
        #: the stage's arguments (:data:`STAGE_ARGS`) by position. The same mapping object
        #: for the life of this manager (registering a hook updates it), so a loop may keep
        #: it and call a stage's functions itself; it then reports an error with :meth:`blame`.
        self.stage_calls: dict[str, tuple[Callable[..., Any], ...]] = {s: () for s in Hook.stages}
        self._warned: set[str] = set()
        self.heartbeat = heartbeat if heartbeat is not None else Heartbeat()
        self.heartbeat.hooks = self.stage_calls

    def __len__(self) -> int:
        return len(self._hooks)

    @property
    def hooks(self) -> list[Hook]:
        """Hooks in the order they run."""
        return [hook for _, _, _, hook in self._hooks]

    def register(
        self,
        hook: Hook | Mapping[str, Any],
        priority: int | str | None = None,
        name: str | None = None,
    ) -> Hook:
        """Add a hook (or build one from a config dict, whose ``priority`` key is honoured)."""
        if isinstance(hook, Mapping):
            cfg = located_copy(hook)
            configured = cfg.pop("priority", None)
            priority = configured if priority is None else priority  # the argument wins
            hook = HOOKS.build(cfg, key_path=f"default_hooks.{name}" if name else None)
        if not isinstance(hook, Hook):
            raise TypeError(
                "hook should be an instance of Hook or dict (a subclass of cadence.hooks.Hook, "
                f"or its config), got {type(hook).__name__}"
            )
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

    def clear(self) -> None:
        """Forget every hook."""
        self._hooks.clear()
        self._rebuild()

    def replace(self, name: str, hook: Hook | Mapping[str, Any]) -> Hook:
        """Put ``hook`` (or one built from its config) in the place of the hook named
        ``name``, with that hook's priority (a config's ``priority`` key overrides it)."""
        names = [taken for _, _, taken, _ in self._hooks]
        if name not in names:
            raise KeyError(f"no hook named '{name}'; hooks: {names}")
        index = names.index(name)
        priority, order = self._hooks[index][0], self._hooks[index][1]
        if isinstance(hook, Mapping):
            cfg = located_copy(hook)
            priority = get_priority(cfg.pop("priority", priority))
            hook = HOOKS.build(cfg, key_path=f"default_hooks.{name}")
        if not isinstance(hook, Hook):
            raise TypeError(
                "hook should be an instance of Hook or dict (a subclass of cadence.hooks.Hook, "
                f"or its config), got {type(hook).__name__}"
            )
        hook.priority = priority
        self._hooks[index] = (priority, order, name, hook)
        self._hooks.sort(key=lambda item: (item[0], item[1]))
        self._rebuild()
        return hook

    def _rebuild(self) -> None:
        self._table = {stage: [] for stage in Hook.stages}
        for priority, _, name, hook in self._hooks:
            for stage in hook.implemented_stages():
                self._table[stage].append(_Entry(name, hook, priority, getattr(hook, stage)))
        self.stage_calls.update(  # updated in place: the runner hands this dict to the loops
            (stage, tuple(_positional_call(e.fn, STAGE_ARGS[stage]) for e in entries))
            for stage, entries in self._table.items()
        )

    def call(self, stage: str, runner: RunnerProtocol, **kwargs: Any) -> None:
        """Run ``stage`` on every hook that implements it; errors name hook and stage.

        The arguments go by position through :attr:`stage_calls`; arguments that
        are not a leading run of the stage's own go to each hook as given.
        """
        calls = self.stage_calls.get(stage)
        if calls is None:
            self._call_custom(stage, runner, kwargs)
            return
        args = _as_positions(STAGE_ARGS[stage], kwargs)
        fn = None
        beat = self.heartbeat  # which hook runs; a stage called inside a hook restores it
        saved = beat.phase, beat.stage, beat.hook
        beat.phase, beat.stage = HOOK, stage
        try:
            if args is not None:
                for fn in calls:
                    beat.hook = fn
                    fn(runner, *args)
            else:
                for fn in [entry.fn for entry in self._table[stage]]:
                    beat.hook = fn
                    fn(runner, **kwargs)
        except Exception as exc:
            self.blame(exc, stage, fn)
            raise
        finally:
            beat.phase, beat.stage, beat.hook = saved

    def _call_custom(self, name: str, runner: RunnerProtocol, kwargs: Mapping[str, Any]) -> None:
        """Run a method that is not a :class:`Hook` stage on every hook that has it, in
        order (as mmengine does for custom hook methods). When none has it, warn once
        per name: it is then most likely a misspelled stage."""
        hooks = [(n, h) for _, _, n, h in self._hooks if callable(getattr(h, name, None))]
        if not hooks and name not in self._warned:
            from ..utils import did_you_mean

            self._warned.add(name)
            warnings.warn(
                f"no hook has a method '{name}', which is not a hook stage either; "
                f"nothing was called.{did_you_mean(name, Hook.stages)}",
                stacklevel=4,
            )
        for hook_name, hook in hooks:
            try:
                getattr(hook, name)(runner, **kwargs)
            except Exception as exc:
                if hasattr(exc, "add_note"):
                    exc.add_note(f"raised by hook '{hook_name}' ({type(hook).__name__}) "
                                 f"in its method '{name}'")  # fmt: skip
                raise

    def blame(self, exc: BaseException, stage: str, fn: Any) -> None:
        """Note on ``exc`` which hook raised it at ``stage``, ``fn`` being one of
        ``stage_calls[stage]`` (or that hook's method); nothing when ``fn`` is neither."""
        entries = self._table.get(stage, [])
        calls = self.stage_calls.get(stage, ())
        entry = None
        if fn in calls:
            entry = entries[calls.index(fn)]
        else:
            entry = next((e for e in entries if e.fn == fn), None)
        if entry is not None and hasattr(exc, "add_note"):
            exc.add_note(f"raised by hook '{entry.name}' ({type(entry.hook).__name__}) "
                         f"at stage '{stage}'")  # fmt: skip

    def register_defaults(self, overrides: Mapping[str, Any] | None) -> None:
        """Register :data:`DEFAULT_HOOKS` updated by ``overrides`` under their names (a
        name set to None removes that default hook)."""
        for name, hook in merge_default_hooks(DEFAULT_HOOKS, overrides).items():
            self.register(hook, name=name)

    def mmengine_info(self) -> str:
        """mmengine's listing: for each stage, its hooks in order as
        ``(PRIORITY) ClassName`` (the priority's name when it has one)."""
        from ..hooks import Priority

        blocks = []
        for stage in Hook.stages:
            lines = []
            for entry in self._table[stage]:
                priority: str | int = entry.hook.priority
                try:
                    priority = Priority(priority).name
                except ValueError:
                    pass
                lines.append(f"({priority:<12}) {type(entry.hook).__name__:<35}")
            if lines:
                blocks.append(f"{stage}:\n" + "\n".join(lines) + "\n -------------------- ")
        return "\n".join(blocks)

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


#: The hooks every run has unless ``default_hooks`` removes one (``name=None``), by name.
DEFAULT_HOOKS = {
    "runtime_info": dict(type="RuntimeInfoHook"),
    "timer": dict(type="IterTimerHook"),
    "sampler_seed": dict(type="DistSamplerSeedHook"),
    "logger": dict(type="LoggerHook"),
    "param_scheduler": dict(type="ParamSchedulerHook"),
    "checkpoint": dict(type="CheckpointHook", interval=1),
    "preemption": dict(type="PreemptionHook"),
}


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
