"""Saving, loading and resuming a whole run (the runner's checkpoint methods)."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..strategies.checkpoint_io import CheckpointError, Snapshot
from ..version import __version__
from .checkpoint import (
    AsyncCheckpointWriter,
    checkpoint_candidates,
    gather_rng_states,
    rank_local_buffers,
    restore_rank_local_buffers,
    restore_rng_states,
    write_last_checkpoint,
)


class CheckpointMixin:
    """Runner methods that turn the run's state into a checkpoint and back.

    A checkpoint holds the strategy's model/optimizer/scheduler states plus
    ``meta`` (position, versions, seed, config text), the message hub, the
    hooks with memory, the training loop's position and every RNG stream of
    every rank (layout: docs/checkpoints.md).
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
    _async_writer: AsyncCheckpointWriter | None = None
    _snapshot: Snapshot | None = None

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
        """Resume (``resume=True`` or a path) or load weights (``load_from``), once.

        ``resume=True`` without ``load_from`` takes the newest valid checkpoint
        of the work dir: the ``last_checkpoint`` pointer's target, else older
        ones; unreadable or corrupted ones are skipped with a warning saying why.
        """
        if self._loaded:
            return
        self._loaded = True
        if self._train_loop is None or not self._resume:
            if self._load_from is not None:
                self.load_checkpoint(self._load_from)
            return
        if isinstance(self._resume, str) or self._load_from is not None:
            self.resume(self._resume if isinstance(self._resume, str) else str(self._load_from))
            return
        self._resume_latest()

    def _resume_latest(self) -> None:
        candidates = checkpoint_candidates(self._work_dir)
        if not candidates:
            self.logger.info(f"resume=True but no checkpoint in {self._work_dir}; starting anew")
            return
        skipped: list[str] = []
        for path in candidates:
            try:
                self.resume(path)
            except (CheckpointError, FileNotFoundError) as e:  # incl. a missing shard folder
                self.logger.warning(f"Skipping checkpoint {path}: {e}")
                skipped.append(path)
                continue
            if skipped:
                self.logger.warning(
                    f"Resumed from {path}, the newest valid checkpoint; skipped {skipped}"
                )
            return
        raise CheckpointError(
            f"resume=True: none of the checkpoints in {self._work_dir} can be used "
            f"({', '.join(skipped)}); see the warnings above for why"
        )

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
        buffers = checkpoint.get("buffers_ranks") or []
        if len(buffers) == self.strategy.world_size:  # e.g. BatchNorm statistics under FSDP
            restore_rank_local_buffers(self._unwrapped(), buffers[self.rank])
        meta = checkpoint.get("meta", {})
        loops = checkpoint.get("loops", {})
        if self._train_loop is not None:
            state = loops.get("train") or {
                "epoch": meta.get("epoch", 0),
                "iter": meta.get("iter", 0),
            }
            self._train_loop.load_state_dict(state)
        hubs = checkpoint.get("message_hub_ranks") or []
        if self.rank < len(hubs):  # each rank its own logged history
            self.message_hub.load_state_dict(hubs[self.rank])
        elif "message_hub" in checkpoint:
            self.message_hub.load_state_dict(checkpoint["message_hub"])
        self._hooks.load_state_dict(checkpoint.get("hooks", {}))
        if "rng" in checkpoint:
            restore_rng_states(checkpoint["rng"], self.rank, self.strategy.world_size, self.logger)
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
        async_: bool = False,
        on_saved: Callable[[str], None] | None = None,
    ) -> str:
        """Write a checkpoint of the whole run to ``out_dir/filename``; return its path.

        Order: the file is written and renamed into place, then (rank 0) the
        ``last_checkpoint`` pointer moves, then ``on_saved(path)`` runs (the
        checkpoint hook deletes old checkpoints there). With ``async_=True`` the
        state is copied to CPU now and all of that happens on a background
        thread; the next save and :meth:`wait_for_checkpoint` wait for it and
        raise its error. Strategies that cannot snapshot (FSDP, DeepSpeed) save
        synchronously.
        """
        import torch

        from ..utils.compat import warn_unused_storage_args

        warn_unused_storage_args("Runner.save_checkpoint", file_client_args=file_client_args,
                                 backend_args=backend_args)  # fmt: skip
        self.wait_for_checkpoint()
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
            world_size=self.strategy.world_size,
        )  # fmt: skip
        hub = self.message_hub.state_dict()
        extra: dict[str, Any] = {
            "meta": meta,
            "message_hub": hub,
            "hooks": self._hooks.state_dict(),
            "rng": gather_rng_states(),
        }
        if self.strategy.world_size > 1:  # logged values and some buffers are rank-local
            from ..dist import all_gather_object

            extra["message_hub_ranks"] = all_gather_object(hub)
            extra["buffers_ranks"] = all_gather_object(rank_local_buffers(self._unwrapped()))
        if self._train_loop is not None:
            extra["loops"] = {"train": self._train_loop.state_dict()}
        self.call_hook("before_save_checkpoint", checkpoint=extra)
        path = os.path.join(out_dir, filename)

        def finish() -> None:
            if update_last:
                write_last_checkpoint(self._work_dir, path)
            if on_saved is not None:
                on_saved(path)

        options = dict(save_optimizer=save_optimizer, save_param_scheduler=save_param_scheduler)
        if async_ and self.strategy.supports_async_save:
            if self.strategy.writes_checkpoint:
                state = self._checkpoint_snapshot().take(
                    self.strategy.checkpoint_state(**options, extra=extra)
                )

                def job() -> None:
                    self.strategy.write_checkpoint(state, path)
                    finish()

                self._checkpoint_writer().submit(job, path)
            return path
        if async_:
            warnings.warn(
                f"{type(self.strategy).__name__} saves checkpoints synchronously "
                "(its engine writes collectively); async_=True is ignored",
                stacklevel=2,
            )
        self.strategy.save_checkpoint(path, **options, extra=extra)
        if self.rank == 0:
            finish()
        return path

    def _unwrapped(self) -> Any:
        return self.strategy.unwrap(self.strategy.model)

    def _checkpoint_writer(self) -> AsyncCheckpointWriter:
        if self._async_writer is None:
            self._async_writer = AsyncCheckpointWriter(self.logger)
        return self._async_writer

    def _checkpoint_snapshot(self) -> Snapshot:
        if self._snapshot is None:
            self._snapshot = Snapshot()
        return self._snapshot

    def wait_for_checkpoint(self) -> None:
        """Wait for a background checkpoint write to finish; raise its error, if any."""
        if self._async_writer is not None:
            self._async_writer.wait()
