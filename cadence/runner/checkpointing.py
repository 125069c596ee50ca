"""Saving, loading and resuming a whole run (the runner's checkpoint methods)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import Any

from ..version import __version__
from .checkpoint import find_latest_checkpoint, rng_state, set_rng_state, write_last_checkpoint


class CheckpointMixin:
    """Runner methods that turn the run's state into a checkpoint and back.

    A checkpoint holds the strategy's model/optimizer/scheduler states plus
    ``meta`` (position, versions, seed, config), the message hub, the hooks
    with memory, the training loop's position and every RNG stream.
    """

    _loaded: bool
    _resume: bool | str
    _load_from: str | None
    _work_dir: str
    _train_loop: Any
    _hooks: Any
    _cfg_text: str
    _experiment_name: str | None
    strategy: Any
    logger: Any
    message_hub: Any

    @property
    def epoch(self) -> int:
        raise NotImplementedError

    @property
    def iter(self) -> int:
        raise NotImplementedError

    @property
    def seed(self) -> int | None:
        raise NotImplementedError

    @property
    def rank(self) -> int:
        raise NotImplementedError

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        raise NotImplementedError

    def load_or_resume(self) -> None:
        """Resume (``resume=True`` or a path) or load weights (``load_from``), once."""
        if self._loaded:
            return
        self._loaded = True
        resume_from: str | None = None
        if isinstance(self._resume, str):
            resume_from = self._resume
        elif self._resume:
            resume_from = self._load_from or find_latest_checkpoint(self._work_dir)
            if resume_from is None:
                self.logger.info(
                    f"resume=True but no checkpoint in {self._work_dir}; starting anew"
                )
        if resume_from is not None and self._train_loop is not None:
            self.resume(resume_from)
        elif self._load_from is not None:
            self.load_checkpoint(self._load_from)

    def _after_load_hooks(self, checkpoint: dict[str, Any]) -> None:
        # As in mmengine: hooks see (and may edit) the checkpoint before it is restored.
        self.call_hook("after_load_checkpoint", checkpoint=checkpoint)

    def load_checkpoint(
        self,
        filename: str,
        map_location: str = "cpu",
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    ) -> dict[str, Any]:
        """Load model weights from ``filename`` (optimizer and position untouched)."""
        checkpoint = self.strategy.load_checkpoint(
            filename, map_location=map_location, strict=strict, revise_keys=revise_keys,
            before_load=self._after_load_hooks,
        )  # fmt: skip
        self.logger.info(f"Loaded weights from {filename}")
        return checkpoint

    def resume(
        self,
        filename: str,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
        map_location: str = "cpu",
    ) -> None:
        """Restore everything that moves from ``filename`` and continue from its position."""
        checkpoint = self.strategy.resume(
            filename, resume_optimizer=resume_optimizer,
            resume_param_scheduler=resume_param_scheduler, map_location=map_location,
            before_load=self._after_load_hooks,
        )  # fmt: skip
        meta = checkpoint.get("meta", {})
        loops = checkpoint.get("loops", {})
        if self._train_loop is not None:
            state = loops.get("train") or {
                "epoch": meta.get("epoch", 0),
                "iter": meta.get("iter", 0),
            }
            self._train_loop.load_state_dict(state)
        if "message_hub" in checkpoint:
            self.message_hub.load_state_dict(checkpoint["message_hub"])
        self._hooks.load_state_dict(checkpoint.get("hooks", {}))
        if "rng" in checkpoint:
            set_rng_state(checkpoint["rng"])
        self.logger.info(f"Resumed from {filename} at epoch {self.epoch}, iter {self.iter}")

    def save_checkpoint(
        self,
        out_dir: str,
        filename: str,
        file_client_args: Any = None,
        save_optimizer: bool = True,
        save_param_scheduler: bool = True,
        meta: Mapping[str, Any] | None = None,
        by_epoch: bool = True,
        backend_args: Any = None,
        update_last: bool = True,
    ) -> str:
        """Write a checkpoint of the whole run to ``out_dir/filename``; return its path."""
        import torch

        meta = dict(meta or {})
        if by_epoch:
            meta.setdefault("epoch", self.epoch + 1)
            meta.setdefault("iter", self.iter)
        else:
            meta.setdefault("epoch", self.epoch)
            meta.setdefault("iter", self.iter + 1)
        meta.update(
            cadence_version=__version__, torch_version=str(torch.__version__),
            time=time.strftime("%Y%m%d_%H%M%S"), seed=self.seed,
            experiment_name=self._experiment_name, cfg=self._cfg_text,
        )  # fmt: skip
        extra: dict[str, Any] = {
            "meta": meta,
            "message_hub": self.message_hub.state_dict(),
            "hooks": self._hooks.state_dict(),
            "rng": rng_state(),
        }
        if self._train_loop is not None:
            extra["loops"] = {"train": self._train_loop.state_dict()}
        self.call_hook("before_save_checkpoint", checkpoint=extra)
        path = os.path.join(out_dir, filename)
        self.strategy.save_checkpoint(
            path, save_optimizer=save_optimizer, save_param_scheduler=save_param_scheduler,
            extra=extra,
        )  # fmt: skip
        if update_last and self.rank == 0:
            write_last_checkpoint(self._work_dir, path)
        return path
