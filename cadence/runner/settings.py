"""What a run's config asks for, kept as given until the parts are built from it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..resilience.hang_watch import hang_timeout_from
from .hook_manager import as_list

#: Top-level config keys the runner reads (mmengine's Runner/FlexibleRunner keys).
RUNNER_KEYS = (
    "model", "work_dir", "train_dataloader", "val_dataloader", "test_dataloader",
    "train_cfg", "val_cfg", "test_cfg", "auto_scale_lr", "optim_wrapper", "param_scheduler",
    "val_evaluator", "test_evaluator", "default_hooks", "custom_hooks", "data_preprocessor",
    "load_from", "resume", "launcher", "env_cfg", "log_processor", "log_level", "visualizer",
    "default_scope", "randomness", "experiment_name", "strategy", "compile", "auto_scale_workers",
    "backend_args", "overwrite",
)  # fmt: skip

#: Per mode, its dataloader, loop and optimizer-or-evaluator keys: all set or none.
TRIPLES = {
    "train": ("train_dataloader", "train_cfg", "optim_wrapper"),
    "val": ("val_dataloader", "val_cfg", "val_evaluator"),
    "test": ("test_dataloader", "test_cfg", "test_evaluator"),
}


@dataclass
class RunSettings:
    """The runner's configured values that later steps build from (``auto_scale_workers``
    rescales some of them in place before anything is built).

    ``loop_parts`` holds the nine keys of :data:`TRIPLES`; the other fields are the
    config keys of the same name.
    """

    model: Any
    loop_parts: dict[str, Any]
    param_scheduler: Any = None
    auto_scale_lr: dict[str, Any] = field(default_factory=dict)
    auto_scale_workers: dict[str, Any] = field(default_factory=dict)
    default_hooks: Mapping[str, Any] | None = None
    custom_hooks: Sequence[Any] = ()
    launcher: str = "none"
    env_cfg: dict[str, Any] = field(default_factory=dict)
    randomness: dict[str, Any] = field(default_factory=dict)
    compile: bool | Mapping[str, Any] = False
    overwrite: bool = False
    log_level: str | int = "INFO"
    log_processor: dict[str, Any] = field(default_factory=dict)
    visualizer: Any = None
    default_scope: str | None = "cadence"

    def __post_init__(self) -> None:
        given = self.loop_parts
        for mode, keys in TRIPLES.items():
            unset = [k for k in keys if given[k] is None]
            if unset and len(unset) != len(keys):
                raise ValueError(
                    f"{', '.join(keys)} should be either all None or not None to {mode}; "
                    f"missing: {', '.join(unset)}"
                )
        if self.param_scheduler is not None and given["optim_wrapper"] is None:
            raise ValueError(
                "param_scheduler should be None when optim_wrapper is None (schedulers change "
                f"the optimizer's values), got {self.param_scheduler!r}"
            )
        hang_timeout_from(self.env_cfg)  # a bad value is refused now, not when a loop runs
        self.custom_hooks = as_list(self.custom_hooks)
        self.launcher = self.launcher or "none"

    @property
    def compiled(self) -> bool:
        """Whether the model is compiled (``compile=`` of the config)."""
        return bool(self.compile)

    @property
    def deterministic(self) -> bool:
        """Whether ``randomness.deterministic`` asks for deterministic algorithms."""
        return bool(self.randomness.get("deterministic", False))

    @property
    def hang_timeout(self) -> float | None:
        """``env_cfg.dist_cfg.hang_timeout`` in seconds (None when unset)."""
        return hang_timeout_from(self.env_cfg)

    def loop_cfg(self, mode: str) -> Any:
        """The ``train_cfg``/``val_cfg``/``test_cfg`` of ``mode`` (None: not configured)."""
        return self.loop_parts[TRIPLES[mode][1]]


__all__ = ["RUNNER_KEYS", "TRIPLES", "RunSettings"]
