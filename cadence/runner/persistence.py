"""The runner's checkpoint methods: what a run's checkpoint holds, handed to the manager.

The runner knows *what* a checkpoint of the run holds (``meta``: position,
versions, seed, config text; the message hub, hooks, training loop, RNG streams,
rank-local buffers and the visualizer's tracker runs as parts);
:class:`~cadence.checkpoint.CheckpointManager` knows *how* to save and restore it,
through the strategy.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..utils.heartbeat import Heartbeat
from ..version import __version__
from .auto_resume import ResumePlan
from .paths import RunPaths

if TYPE_CHECKING:  # the checkpoint package is imported when a checkpoint is first needed
    from ..checkpoint import CheckpointManager


class _TrainPosition:
    """The training loop's position as the checkpoint part ``loops``."""

    def __init__(self, loop: Any) -> None:
        self.loop = loop

    def state_dict(self) -> dict[str, Any]:
        return {"train": self.loop.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        self.loop.load_state_dict(state["train"])


class _Optimization:
    """What a validation may change in the optimization, as the part ``optimization`` of
    an after-validation file (``cadence.checkpoint.after_val``): the schedulers' states
    (a plateau scheduler steps on the metrics) and the optimizer's hyper-parameters,
    every parameter group's entries but its parameters (the values it writes there)."""

    def __init__(self, strategy: Any) -> None:
        self.strategy = strategy

    def _groups(self) -> list[dict[str, Any]]:
        groups = getattr(self.strategy.optim_wrapper, "param_groups", None) or []
        if isinstance(groups, Mapping):  # OptimWrapperDict: by wrapper name
            return [group for name in sorted(groups) for group in groups[name]]
        return list(groups)

    def state_dict(self) -> dict[str, Any]:
        import torch

        settings = [
            {key: value.detach().clone() if isinstance(value, torch.Tensor) else value
             for key, value in group.items() if key != "params"}
            for group in self._groups()
        ]  # fmt: skip
        return {"param_schedulers": self.strategy.scheduler_state_dict(), "settings": settings}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        import torch

        self.strategy.load_scheduler_state_dict(state.get("param_schedulers"))
        groups, settings = self._groups(), state.get("settings") or []
        if len(groups) != len(settings):
            return  # another optimizer layout: the checkpoint's values stand
        for group, saved in zip(groups, settings):
            for key, value in saved.items():
                current = group.get(key)
                if isinstance(current, torch.Tensor) and isinstance(value, torch.Tensor):
                    current.copy_(value)
                else:
                    group[key] = value


class PersistenceMixin:
    """Runner methods that save and restore the run (layout: docs/checkpoints.md)."""

    _loaded: bool
    _resume: bool | str
    _load_from: str | None
    _train_loop: Any
    _hook_manager: Any
    _cfg_text: str
    _experiment_name: str | None
    _checkpoints: CheckpointManager | None = None
    strategy: Any
    paths: RunPaths
    heartbeat: Heartbeat
    logger: Any
    message_hub: Any
    visualizer: Any

    @property
    def cfg(self) -> Any:
        raise NotImplementedError

    @property
    def work_dir(self) -> str:
        raise NotImplementedError

    @property
    def epoch(self) -> int:
        raise NotImplementedError

    @property
    def iter(self) -> int:
        raise NotImplementedError

    @property
    def seed(self) -> int | None:
        raise NotImplementedError

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        raise NotImplementedError

    @property
    def checkpoints(self) -> CheckpointManager:
        """The run's checkpoint manager, with the run's current parts registered."""
        from ..checkpoint import CheckpointManager
        from ..checkpoint.rank_state import LoaderPlace, RankLocalBuffers, RngStreams

        if self._checkpoints is None:
            self._checkpoints = CheckpointManager(
                self.strategy, self.work_dir, self.logger, storage=self.paths.storage
            )
        manager = self._checkpoints
        strategy = self.strategy
        if self.strategy.model is not None:
            module = strategy.unwrap(strategy.model)
            manager.register("buffers", RankLocalBuffers(module), per_rank=True, shared=False)
        # after_val: what a validation may change, also kept after the validation that
        # follows a checkpoint (cadence.checkpoint.after_val)
        if self._train_loop is not None:
            manager.register("loops", _TrainPosition(self._train_loop), after_val=True)
            manager.register("data_stream", LoaderPlace(self._train_loop), per_rank=True)
        manager.register("message_hub", self.message_hub, per_rank=True, after_val=True)
        manager.register("hooks", self._hook_manager, after_val=True)
        rng = RngStreams(strategy.rank, strategy.world_size, self.logger)
        manager.register("rng", rng, after_val=True)
        visualizer = self.visualizer
        if callable(getattr(visualizer, "state_dict", None)) and callable(
            getattr(visualizer, "load_state_dict", None)
        ):  # which tracker runs to continue
            manager.register("visualizer", visualizer, after_val=True)
        manager.register("optimization", _Optimization(strategy), after_val=True,
                         in_checkpoint=False)  # fmt: skip
        return manager

    def load_or_resume(self) -> None:
        """Resume (``resume=True`` or a path) or load weights (``load_from``), once;
        then record the config in the visualizer.

        ``resume=True`` without ``load_from`` takes the newest valid checkpoint
        of the work dir: the ``last_checkpoint`` pointer's target, else older
        ones; unreadable or corrupted ones are skipped with a warning saying why.
        ``resume='auto'``, and any run that a launcher restarted, first look for
        that checkpoint and otherwise start as configured (:mod:`.auto_resume`).
        The config is recorded only now, after the resume, because recording opens
        the backends' tracker runs: a resumed run must open the ones it continues.
        """
        if self._loaded:
            return
        self._loaded = True
        self._load_or_resume()
        if self.visualizer is not None and len(self.cfg):
            self.visualizer.add_config(self.cfg)

    def _load_or_resume(self) -> None:
        if self._train_loop is not None:
            plan = ResumePlan.of(self._resume, self._load_from, self.strategy.world_size)
            if plan.auto and self._auto_resume(plan):
                return
        if self._train_loop is None or not self._resume:
            if self._load_from is not None:
                self.load_checkpoint(self._load_from)
            return
        if isinstance(self._resume, str) or self._load_from is not None:
            self.resume(self._resume if isinstance(self._resume, str) else str(self._load_from))
            return
        path = self.checkpoints.resume_latest(before_load=self._before_load,
                                              foreign=self._foreign_work_dir())  # fmt: skip
        if path is None:
            self.logger.info(f"resume=True but no checkpoint in {self.work_dir}; starting anew")
        else:
            self._note_resumed(path)

    def _foreign_work_dir(self) -> bool:
        """Whether no cadence run has recorded itself in the work dir (an mmengine one)."""
        import os

        from .run_record import RECORD_FILE

        return not os.path.isfile(os.path.join(self.work_dir, RECORD_FILE))

    def _auto_resume(self, plan: ResumePlan) -> bool:
        """Resume from the work dir's newest verified checkpoint if there is one (True);
        else leave ``resume`` as the run's first start would have it (False)."""
        self._resume = True  # what hooks see while the checkpoint loads
        path = self.checkpoints.resume_latest(
            before_load=self._before_load, restarted=plan.attempt.restarted
        )
        if path is not None:
            self._note_resumed(path, f" (auto-resume: {plan.reason})")
            return True
        self._resume = plan.configured
        self.logger.info(
            f"auto-resume ({plan.reason}): no checkpoint in {self.work_dir} yet; "
            + ("starting as configured" if self._resume or self._load_from else "starting anew")
        )
        return False

    def earlier_run(self, plan: ResumePlan) -> str | None:
        """Why a training run may not start in its work dir: it holds checkpoints of an
        earlier run that a fresh start would overwrite (None when it holds none, or the run
        continues them: ``resume=True``/``'auto'``, a restarted job, or a resume from one of
        them). ``plan`` is this attempt's :class:`ResumePlan`, agreed by every rank before
        (rank 0 alone asks, inside the work-dir lock: nothing collective may happen here;
        a plan read from rank 0's environment alone would miss a restart that only another
        machine's launcher counted, and refuse a restarted job)."""
        if plan.auto or (self._resume is True and self._load_from is None):
            return None
        held = self.checkpoints.held()
        if not held:
            return None
        source = self._resume if isinstance(self._resume, str) else None
        if self._resume is True:
            source = self._load_from
        if source is not None and any(self.paths.holds(source, os.path.dirname(p)) for p in held):
            return None
        names = ", ".join(os.path.basename(p) for p in held[:4]) + (", ..." if held[4:] else "")
        return (
            f"work dir {self.work_dir} holds the checkpoints of an earlier run ({names}), "
            "which this new run would overwrite. Continue that run (--resume, or resume=True "
            "in the config), train in another work dir (--work-dir), or let this run replace "
            "them (--overwrite, or overwrite=True in the config)"
        )

    @property
    def initialises_weights(self) -> bool:
        """Whether ``train()`` calls the model's ``init_weights`` before loading a checkpoint."""
        return ResumePlan.of(self._resume, self._load_from).initialises_weights

    def _before_load(self, checkpoint: dict[str, Any]) -> None:
        # As in mmengine: hooks see (and may edit) the checkpoint before it is restored.
        self.call_hook("after_load_checkpoint", checkpoint=checkpoint)
        if "loops" not in checkpoint and "meta" in checkpoint:  # mmengine: position in meta
            meta = checkpoint["meta"]
            position = {"epoch": meta.get("epoch", 0), "iter": meta.get("iter", 0)}
            checkpoint["loops"] = {"train": position}

    def _note_resumed(self, path: str, why: str = "") -> None:
        """Record (for the hooks: which folder their saved file names belong to) and log it.
        A checkpoint of the work dir whose validation had not run gets its after-validation
        file once the resumed run has run it."""
        self.paths.resumed_from = path
        if getattr(self._train_loop, "val_pending", False) and self.paths.holds(
            path, self.work_dir
        ):
            self.checkpoints.await_validation(path)
        self.logger.info(f"Resumed from {path} at epoch {self.epoch}, iter {self.iter}{why}")

    def load_checkpoint(
        self,
        filename: str,
        map_location: str = "cpu",
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    ) -> dict[str, Any]:
        """Load model weights from ``filename`` (optimizer and position untouched)."""
        checkpoint = self.checkpoints.load_weights(
            filename, map_location=map_location, strict=strict, revise_keys=revise_keys,
            before_load=self._before_load,
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
        self.checkpoints.resume(
            filename, resume_optimizer=resume_optimizer,
            resume_param_scheduler=resume_param_scheduler, map_location=map_location,
            before_load=self._before_load,
        )  # fmt: skip
        self._note_resumed(filename)

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
        delete_after: Sequence[str] = (),
        pointers: Sequence[str] = (),
    ) -> str:
        """Write a checkpoint of the whole run to ``out_dir/filename``; return its path.

        Order: the file is written and renamed into place, then (rank 0) the
        ``last_checkpoint`` pointer moves, then ``delete_after`` (older checkpoints)
        are deleted; ``pointers`` names more pointer files to move (``best_checkpoint``).
        With ``async_=True`` the state is copied to CPU now and all of
        that happens on a background thread; the next save and
        :meth:`wait_for_checkpoint` wait for it and raise its error. Strategies
        whose engines write collectively (FSDP, DeepSpeed) save synchronously.
        """
        import os

        import torch

        out_dir = self.paths.stage(out_dir, backend_args or file_client_args)
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
        dataset = getattr(getattr(self._train_loop, "dataloader", None), "dataset", None)
        metainfo = getattr(dataset, "metainfo", None)
        if metainfo is not None:  # as mmengine: its resume and the inferencers read it
            meta.setdefault("dataset_meta", metainfo)
        with self.heartbeat.busy("saving a checkpoint"):  # the hang watchdog: every rank saves
            return self.checkpoints.save(
                os.path.join(out_dir, filename), meta=meta, save_optimizer=save_optimizer,
                save_param_scheduler=save_param_scheduler, update_last=update_last,
                delete_after=delete_after, async_=async_, pointers=pointers,
                before_save=lambda extra: self.call_hook("before_save_checkpoint",
                                                         checkpoint=extra),
                before_val=bool(getattr(self._train_loop, "val_follows", False)),
            )  # fmt: skip

    def after_validation(self) -> None:
        """The training loop's validation has finished: the checkpoints taken just before
        it record so (their after-validation files), so a resume does not validate again."""
        if self._checkpoints is not None:
            with self.heartbeat.busy("saving the state after validation"):
                self._checkpoints.after_validation()

    def wait_for_checkpoint(self) -> None:
        """Wait for a background checkpoint write to finish; raise its error, if any."""
        if self._checkpoints is not None:
            with self.heartbeat.busy("waiting for a checkpoint write"):
                self._checkpoints.wait()
        elif self.strategy.rank == 0:  # no checkpoint yet: still upload the logs
            self.paths.storage.push_tree(self.work_dir)
