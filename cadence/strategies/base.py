"""The strategy seam: everything that depends on *where* the model runs.

The runner asks its strategy to set up the environment, to place, wrap and
compile the model, to build the optimizer wrapper and schedulers, and to read
and write checkpoints. The runner never asks which strategy it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ..checkpoint.files import FileDigests, companion_digests
from ..checkpoint.weights import load_state_dict_into
from ..registry import MODELS
from .env import apply_env_cfg, set_random_seed


class BaseStrategy:
    """Base class of strategies; subclasses decide device, wrapping and I/O.

    Args:
        device: ``'cpu'``, ``'cuda'``, ``'cuda:1'``... (subclasses pick a default).
    """

    def __init__(self, device: str | torch.device | None = None) -> None:
        self._device = torch.device(device) if device is not None else None
        self._seed: int | None = None
        self.model: nn.Module | None = None
        self.optim_wrapper: Any = None
        self.param_schedulers: Any = None

    # ---------------------------------------------------------------- facts
    @property
    def rank(self) -> int:
        return 0

    @property
    def world_size(self) -> int:
        return 1

    @property
    def local_rank(self) -> int:
        return 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def device(self) -> torch.device:
        if self._device is None:
            self._device = self.default_device()
        return self._device

    @property
    def seed(self) -> int | None:
        return self._seed

    def default_device(self) -> torch.device:
        """The device used when none is configured."""
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")

    # ---------------------------------------------------------------- setup
    def setup_env(
        self,
        launcher: str = "none",
        randomness: Mapping[str, Any] | None = None,
        env_cfg: Mapping[str, Any] | None = None,
    ) -> None:
        """Set up processes, devices, seeds and determinism for this run."""
        env_cfg = dict(env_cfg or {})
        apply_env_cfg(env_cfg)
        self.setup_distributed(launcher, dict(env_cfg.get("dist_cfg") or {}))
        randomness = dict(randomness or {})
        unknown = sorted(set(randomness) - {"seed", "deterministic", "diff_rank_seed"})
        if unknown:
            raise ValueError(
                f"randomness: unknown keys {unknown}; expected seed, deterministic, diff_rank_seed"
            )
        self._seed = set_random_seed(
            randomness.get("seed"),
            deterministic=bool(randomness.get("deterministic", False)),
            diff_rank_seed=bool(randomness.get("diff_rank_seed", False)),
            rank=self.rank,
            sync=self.sync_seed,
        )

    def setup_distributed(self, launcher: str, dist_cfg: dict[str, Any]) -> None:
        """Create the process group (nothing to do on one device)."""
        if launcher not in (None, "none"):
            raise ValueError(
                f"{type(self).__name__} runs one process; launcher='{launcher}' needs a "
                "distributed strategy (e.g. strategy=dict(type='DDPStrategy'))"
            )

    def sync_seed(self) -> int:
        """A random seed that every rank agrees on."""
        import random

        return random.SystemRandom().randrange(2**31)

    # -------------------------------------------------------------- prepare
    def build_model(self, model: nn.Module | Mapping[str, Any]) -> nn.Module:
        """Build ``model`` from its config (MODELS) unless it is already a module."""
        if isinstance(model, nn.Module):
            return model
        if isinstance(model, Mapping):
            return MODELS.build(model, key_path="model")
        raise TypeError(f"model must be an nn.Module or a config dict, got {type(model).__name__}")

    def prepare(
        self,
        model: nn.Module | Mapping[str, Any],
        *,
        optim_wrapper: Any = None,
        param_scheduler: Any = None,
        compile: bool | Mapping[str, Any] = False,
        dispatch_kwargs: Mapping[str, Any] | None = None,
    ) -> tuple[nn.Module, Any, Any]:
        """Build, place, wrap and compile the model; build its optimizer and schedulers.

        ``dispatch_kwargs`` carries facts from the runner: ``epoch_length``,
        ``max_epochs``, ``max_iters`` (for schedulers) and ``lr_scale`` (the
        auto-scale-lr ratio, applied before schedulers record initial values).
        """
        from ..model import as_cadence_model
        from ..optim import build_optim_wrapper, build_param_schedulers

        kwargs = dict(dispatch_kwargs or {})
        if self.model is None or model is not self.model:  # not placed yet
            module = as_cadence_model(self.build_model(model)).to(self.device)
            if compile:
                options = dict(compile) if isinstance(compile, Mapping) else {}
                module.compile(**options)
            self.model = self.wrap_model(module)
        if optim_wrapper is not None:
            self.optim_wrapper = build_optim_wrapper(self.unwrap(self.model), optim_wrapper)
            scale = kwargs.get("lr_scale")
            if scale is not None and scale != 1:
                scale_lr(self.optim_wrapper, scale)
            if param_scheduler is not None:
                self.param_schedulers = build_param_schedulers(
                    self.optim_wrapper,
                    param_scheduler,
                    epoch_length=kwargs.get("epoch_length"),
                    max_epochs=kwargs.get("max_epochs"),
                    max_iters=kwargs.get("max_iters"),
                )
        return self.model, self.optim_wrapper, self.param_schedulers

    def wrap_model(self, model: nn.Module) -> nn.Module:
        """Wrap the placed model (DDP, FSDP...); the identity on one device."""
        return model

    @staticmethod
    def unwrap(model: nn.Module) -> nn.Module:
        """The user's module inside any wrapper."""
        return getattr(model, "module", model)

    # ---------------------------------------------------------- state dicts
    def model_state_dict(self) -> dict[str, Any]:
        """The model's full state dict (on rank 0 for sharded strategies)."""
        if self.model is None:
            raise RuntimeError("no model yet: call prepare() first")
        return self.unwrap(self.model).state_dict()

    def optim_state_dict(self) -> dict[str, Any]:
        """The optimizer wrapper's state dict."""
        return self.optim_wrapper.state_dict() if self.optim_wrapper is not None else {}

    def scheduler_state_dict(self) -> Any:
        """State of every parameter scheduler (a list, or a dict of lists)."""
        schedulers = self.param_schedulers
        if schedulers is None:
            return None
        if isinstance(schedulers, Mapping):
            return {k: [s.state_dict() for s in v] for k, v in schedulers.items()}
        return [s.state_dict() for s in schedulers]

    def load_scheduler_state_dict(self, state: Any) -> None:
        schedulers = self.param_schedulers
        if schedulers is None or state is None:
            return
        if isinstance(schedulers, Mapping):
            for key, group in schedulers.items():
                for scheduler, sub in zip(group, state[key]):
                    scheduler.load_state_dict(sub)
        else:
            for scheduler, sub in zip(schedulers, state):
                scheduler.load_state_dict(sub)

    # ---------------------------------------------------------- checkpoints
    #: ``checkpoint_state`` alone is the whole checkpoint: it may be written in the
    #: background (see :class:`cadence.checkpoint.CheckpointSteps`).
    supports_async_save: bool = True

    def checkpoint_state(
        self, *, save_optimizer: bool = True, save_param_scheduler: bool = True
    ) -> dict[str, Any]:
        """Model (+ optimizer, schedulers) as one dict (live tensors, not copies)."""
        state: dict[str, Any] = {"state_dict": _to_cpu(self.model_state_dict())}
        if save_optimizer and self.optim_wrapper is not None:
            state["optimizer"] = self.optim_state_dict()
        if save_param_scheduler and self.param_schedulers is not None:
            state["param_schedulers"] = self.scheduler_state_dict()
        return state

    def save_companion(self, filename: str, *, save_optimizer: bool = True) -> None:
        """Write files beside the checkpoint file: none for one-file checkpoints."""

    def companion_digests(self, filename: str) -> FileDigests:
        """Size and SHA-256 of every companion file of ``filename``."""
        return companion_digests(filename)

    def barrier(self) -> None:
        """Wait for every rank: nothing to wait for in one process."""

    def load_weights(
        self,
        checkpoint: dict[str, Any],
        *,
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    ) -> None:
        """Load the model weights of a read checkpoint (``load_from``)."""
        if self.model is None:
            raise RuntimeError("no model yet: call prepare() first")
        load_state_dict_into(self.unwrap(self.model), checkpoint, strict, revise_keys)

    def restore(
        self,
        filename: str,
        checkpoint: dict[str, Any],
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
    ) -> None:
        """Restore model, optimizer and schedulers from a read checkpoint."""
        self.load_weights(checkpoint, strict=True)
        if resume_optimizer and self.optim_wrapper is not None and "optimizer" in checkpoint:
            self.optim_wrapper.load_state_dict(checkpoint["optimizer"])
        if resume_param_scheduler and "param_schedulers" in checkpoint:
            self.load_scheduler_state_dict(checkpoint["param_schedulers"])

    def teardown(self) -> None:
        """Release what the strategy set up (process groups, engines); nothing here."""


def scale_lr(optim_wrapper: Any, ratio: float) -> None:
    """Multiply every learning rate of ``optim_wrapper`` (or a dict of them) by ``ratio``."""
    wrappers = optim_wrapper.values() if hasattr(optim_wrapper, "values") else [optim_wrapper]
    for wrapper in wrappers:
        for group in wrapper.param_groups:
            group["lr"] = group["lr"] * ratio


def _to_cpu(state: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v.detach().cpu() if isinstance(v, torch.Tensor) else v for k, v in state.items()}


__all__ = ["BaseStrategy", "scale_lr"]
