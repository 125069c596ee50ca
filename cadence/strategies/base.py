"""The strategy seam: everything that depends on *where* the model runs.

The runner builds the model, optimizer wrapper and schedulers, and owns them (a
:class:`~cadence.contracts.Trained`); it asks its strategy to set up the
environment (process group, device, seeds), to place, compile and wrap the built
objects (``setup_module`` then ``setup`` return the wrapped ones), to read and
write checkpoints of them, and to release what it set up (``teardown``). Every
method that acts on those objects is handed them: a strategy keeps only what it
creates itself (the process group, an engine such as DeepSpeed's). The runner
never asks which strategy it holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from ..checkpoint.companions import FileDigests, companion_digests
from ..checkpoint.files import verify_checkpoint
from ..checkpoint.weights import load_state_dict_into
from .env import apply_env_cfg, set_random_seed

if TYPE_CHECKING:
    from ..contracts import Schedulers, Trained


class BaseStrategy:
    """Base class of strategies; subclasses decide device, wrapping and I/O.

    Args:
        device: ``'cpu'``, ``'cuda'``, ``'cuda:1'``... (subclasses pick a default).
    """

    def __init__(self, device: str | torch.device | None = None) -> None:
        self._device = torch.device(device) if device is not None else None
        self._seed: int | None = None

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

    # ---------------------------------------------------------------- setup
    def optim_wrapper_config(self, cfg: Any) -> Any:
        """The ``optim_wrapper`` config to build for this strategy (``cfg`` here).

        Strategies whose engine does the optimizer wrapper's work (DeepSpeed)
        keep only the keys that say how to build the optimizer.
        """
        return cfg

    def setup_module(
        self, module: nn.Module, *, compile: bool | Mapping[str, Any] = False
    ) -> nn.Module:
        """Place, compile and wrap the built ``module``; return the model to run (the
        strategy keeps no reference to it).

        Runs before the optimizer is built: wrappers that replace parameters
        (FSDP's ``fully_shard``) do so here, so the optimizer sees the final ones.
        """
        module = module.to(self.device)
        if compile:
            options = dict(compile) if isinstance(compile, Mapping) else {}
            module.compile(**options)
        return self.wrap_model(module)

    def setup(
        self, model: nn.Module, optim_wrapper: Any = None, *, batch_size: int | None = None
    ) -> tuple[nn.Module, Any]:
        """Take the model from :meth:`setup_module` and the optimizer wrapper built for
        ``unwrap(model)`` (None to evaluate); return the pair to train with.

        Strategies whose engine owns the optimizer step (DeepSpeed) create the
        engine here; ``batch_size`` is the per-process training batch size. Keeps
        neither of the pair: the pair as given on one device.
        """
        return model, optim_wrapper

    def wrap_model(self, model: nn.Module) -> nn.Module:
        """Wrap the placed model (DDP, FSDP...); the identity on one device."""
        return model

    @staticmethod
    def unwrap(model: nn.Module) -> nn.Module:
        """The user's module inside any wrapper."""
        return getattr(model, "module", model)

    # ---------------------------------------------------------- state dicts
    def model_state_dict(self, model: nn.Module) -> dict[str, Any]:
        """The full state dict of ``model`` as this strategy set it up (complete on rank 0
        for sharded strategies)."""
        return self.unwrap(model).state_dict()

    def optim_state_dict(self, optim_wrapper: Any) -> dict[str, Any]:
        """The state dict of ``optim_wrapper`` (``{}`` for None)."""
        return optim_wrapper.state_dict() if optim_wrapper is not None else {}

    def scheduler_state_dict(self, schedulers: Schedulers | None) -> Any:
        """State of every parameter scheduler of ``schedulers`` (a list, or a dict of
        lists; None for None)."""
        if schedulers is None:
            return None
        if isinstance(schedulers, Mapping):
            return {k: [s.state_dict() for s in v] for k, v in schedulers.items()}
        return [s.state_dict() for s in schedulers]

    def load_scheduler_state_dict(self, schedulers: Schedulers | None, state: Any) -> None:
        """Load ``state`` (from :meth:`scheduler_state_dict`) into ``schedulers``."""
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
        self, trained: Trained, *, save_optimizer: bool = True, save_param_scheduler: bool = True
    ) -> dict[str, Any]:
        """The model of ``trained`` (+ optimizer, schedulers) as one dict (live tensors, not
        copies)."""
        model = trained.require_model()
        state: dict[str, Any] = {"state_dict": _to_cpu(self.model_state_dict(model))}
        if save_optimizer and trained.optim_wrapper is not None:
            state["optimizer"] = self.optim_state_dict(trained.optim_wrapper)
        if save_param_scheduler and trained.param_schedulers is not None:
            state["param_schedulers"] = self.scheduler_state_dict(trained.param_schedulers)
        return state

    #: Digests of the companion files this process wrote in the save under way, hashed
    #: while they were written (by path relative to the checkpoint's folder);
    #: ``companion_digests`` hashes only the files missing here.
    written_digests: FileDigests = {}  # noqa: RUF012 - replaced per instance, never mutated

    def save_companion(
        self, trained: Trained, filename: str, *, save_optimizer: bool = True
    ) -> None:
        """Write files of ``trained`` beside the checkpoint file: none for one-file
        checkpoints."""

    def companion_digests(self, filename: str) -> FileDigests:
        """Size and digest of every companion file of ``filename``."""
        return companion_digests(filename)

    def verify_checkpoint(self, filename: str) -> dict[str, Any] | None:
        """Check every file of ``filename`` against its manifest; return the manifest."""
        return verify_checkpoint(filename)

    def barrier(self) -> None:
        """Wait for every rank: nothing to wait for in one process."""

    def load_weights(
        self,
        model: nn.Module,
        checkpoint: dict[str, Any],
        *,
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    ) -> None:
        """Load the model weights of a read checkpoint into ``model`` (``load_from``)."""
        load_state_dict_into(self.unwrap(model), checkpoint, strict, revise_keys)

    def restore(
        self,
        trained: Trained,
        filename: str,
        checkpoint: dict[str, Any],
        *,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
    ) -> None:
        """Restore the model, optimizer and schedulers of ``trained`` from a read
        checkpoint."""
        self.load_weights(trained.require_model(), checkpoint, strict=True)
        optim_wrapper = trained.optim_wrapper
        if resume_optimizer and optim_wrapper is not None and "optimizer" in checkpoint:
            optim_wrapper.load_state_dict(checkpoint["optimizer"])
        if resume_param_scheduler and "param_schedulers" in checkpoint:
            self.load_scheduler_state_dict(trained.param_schedulers, checkpoint["param_schedulers"])

    def teardown(self, trained: Trained | None = None, *, barrier: bool = True) -> None:
        """Release what :meth:`setup_env` and :meth:`setup` created (process group,
        engine); nothing on one device. ``trained``: the run's objects, which the caller
        still holds; a strategy whose wrappers are tied to what it releases (the process
        group) drops them from it first; on one device they live on. ``barrier=False`` on
        error paths: a failed rank must not wait for its peers."""


def default_strategy_type(launcher: str | None) -> str:
    """The strategy a config without ``strategy.type`` gets: one device without a
    launcher, DDP with one."""
    return "SingleDeviceStrategy" if launcher in (None, "none") else "DDPStrategy"


def scale_lr(optim_wrapper: Any, ratio: float) -> None:
    """Multiply every learning rate of ``optim_wrapper`` (or a dict of them) by ``ratio``."""
    wrappers = optim_wrapper.values() if hasattr(optim_wrapper, "values") else [optim_wrapper]
    for wrapper in wrappers:
        for group in wrapper.param_groups:
            group["lr"] = group["lr"] * ratio


def _to_cpu(state: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v.detach().cpu() if isinstance(v, torch.Tensor) else v for k, v in state.items()}


__all__ = ["BaseStrategy", "default_strategy_type", "scale_lr"]
