"""The runner's hook methods (mmengine's ``register_hook``... ``call_hook``), over a
:class:`~cadence.runner.hook_manager.HookManager`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .hook_manager import HookManager, merge_default_hooks

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


class HooksMixin:
    """Register, list and call a run's hooks (mmengine's ``Runner`` hook methods)."""

    _hook_manager: HookManager

    @property
    def hooks(self) -> list[Any]:
        """The registered hooks, in the order they run."""
        return self._hook_manager.hooks

    @property
    def _hooks(self) -> list[Any]:
        # mmengine's attribute: its tests read it and set it to [] to start over
        return self._hook_manager.hooks

    @_hooks.setter
    def _hooks(self, hooks: Sequence[Any]) -> None:
        self._hook_manager.clear()
        for hook in hooks:
            self._hook_manager.register(hook)

    def register_hook(self, hook: Any, priority: int | str | None = None) -> None:
        """Add a hook (object or config dict) to this run.

        Its priority is ``priority`` if given, else the config's ``priority`` key,
        else the hook's own; hooks of equal priority run in registration order.
        """
        self._hook_manager.register(hook, priority=priority)

    def register_default_hooks(self, hooks: Mapping[str, Any] | None = None) -> None:
        """Register :data:`DEFAULT_HOOKS` updated by ``hooks`` (a name set to None
        removes that default hook)."""
        for name, hook in merge_default_hooks(DEFAULT_HOOKS, hooks).items():
            self._hook_manager.register(hook, name=name)

    def register_custom_hooks(self, hooks: Sequence[Any]) -> None:
        """Register each of ``hooks`` (objects or config dicts)."""
        for hook in hooks:
            self._hook_manager.register(hook)

    def register_hooks(
        self,
        default_hooks: Mapping[str, Any] | None = None,
        custom_hooks: Sequence[Any] | None = None,
    ) -> None:
        """:meth:`register_default_hooks`, then :meth:`register_custom_hooks`."""
        self.register_default_hooks(default_hooks)
        if custom_hooks is not None:
            self.register_custom_hooks(custom_hooks)

    def get_hooks_info(self) -> str:
        """mmengine's listing: for each stage, its hooks in order as
        ``(PRIORITY) ClassName`` (the priority's name when it has one)."""
        from ..hooks import Hook, Priority

        blocks = []
        for stage in Hook.stages:
            lines = []
            for hook in self.hooks:
                if stage in hook.implemented_stages():
                    try:
                        priority: str | int = Priority(hook.priority).name
                    except ValueError:
                        priority = hook.priority
                    lines.append(f"({priority:<12}) {type(hook).__name__:<35}")
            if lines:
                blocks.append(f"{stage}:\n" + "\n".join(lines) + "\n -------------------- ")
        return "\n".join(blocks)

    def describe_hooks(self) -> str:
        """For each stage, the hooks that run there in order, by name with their
        priority numbers (the table the run writes to ``hooks.txt``)."""
        return self._hook_manager.describe()

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        """Call stage ``fn_name`` on every hook that implements it."""
        self._hook_manager.call(fn_name, self, **kwargs)  # type: ignore[arg-type]

    def blame_hook(self, exc: BaseException, fn_name: str, fn: Any) -> None:
        """Note on ``exc`` the hook whose function ``fn`` (from ``stage_calls``) raised it."""
        self._hook_manager.blame(exc, fn_name, fn)


__all__ = ["DEFAULT_HOOKS", "HooksMixin"]
