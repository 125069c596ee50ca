"""Saving and restoring a whole run: what its checkpoint holds, handed to the manager.

:class:`RunCheckpoints` knows *what* a checkpoint of the run holds (``meta``:
position, versions, seed, config text; the message hub, hooks, training loop, RNG
streams, rank-local buffers and the visualizer's tracker runs as parts, each
registered once, when it is made) and *when* the run loads one;
:class:`~cadence.checkpoint.CheckpointManager` knows *how* to save and restore it,
through the strategy. The model, optimizer wrapper and schedulers are the runner's
(``runner.trained``): they are handed to the manager at every save and load.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..resilience.auto_resume import ResumePlan
from ..version import __version__

if TYPE_CHECKING:
    from torch import nn

    from ..checkpoint import CheckpointManager
    from ..contracts import RunnerProtocol, Trained
    from ..strategies.base import BaseStrategy
    from .environment import RunEnvironment
    from .hook_manager import HookManager
    from .paths import RunPaths


class _CurrentHub:
    """The environment's message hub as a checkpoint part, looked up at each save and load
    (a script may replace ``runner.message_hub``)."""

    def __init__(self, env: RunEnvironment) -> None:
        self.env = env

    def state_dict(self) -> dict[str, Any]:
        return self.env.message_hub.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.env.message_hub.load_state_dict(state)


class _Optimization:
    """What a validation may change in the optimization, as the part ``optimization`` of
    an after-validation file (``cadence.checkpoint.after_val``): the schedulers' states
    (a plateau scheduler steps on the metrics) and the optimizer's hyper-parameters,
    every parameter group's entries but its parameters (the values it writes there).
    ``trained`` returns the run's objects at each save and load."""

    def __init__(self, strategy: BaseStrategy, trained: Callable[[], Trained]) -> None:
        self.strategy = strategy
        self.trained = trained

    def _groups(self) -> list[dict[str, Any]]:
        groups = getattr(self.trained().optim_wrapper, "param_groups", None) or []
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
        schedulers = self.strategy.scheduler_state_dict(self.trained().param_schedulers)
        return {"param_schedulers": schedulers, "settings": settings}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        import torch

        schedulers = self.trained().param_schedulers
        self.strategy.load_scheduler_state_dict(schedulers, state.get("param_schedulers"))
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


class RunCheckpoints:
    """The run's checkpoints: save, resume, load weights, and the start's refusal to
    overwrite an earlier run's.

    ``runner`` is the run the hooks see (their ``after_load_checkpoint`` and
    ``before_save_checkpoint`` stages, its position and names); ``paths`` says where
    its files are and what to load; ``trained`` returns the run's model, optimizer
    wrapper and schedulers (``runner.trained``), which every save and load acts on.
    """

    def __init__(
        self,
        runner: RunnerProtocol,
        strategy: BaseStrategy,
        paths: RunPaths,
        env: RunEnvironment,
        hook_manager: HookManager,
        trained: Callable[[], Trained],
    ) -> None:
        from ..checkpoint import CheckpointManager  # with the first runner, not with its module
        from .rank_state import RngStreams

        self._runner = runner
        self._paths = paths
        self._trained = trained
        logger = env.logger
        #: saves and restores the registered parts through the strategy
        self.manager: CheckpointManager = CheckpointManager(
            strategy, paths.work_dir, logger, storage=paths.storage
        )
        manager = self.manager
        manager.register("message_hub", _CurrentHub(env), per_rank=True, after_val=True)
        manager.register("hooks", hook_manager, after_val=True)
        manager.register("rng", RngStreams(strategy, logger), after_val=True)
        visualizer = env.visualizer
        if callable(getattr(visualizer, "state_dict", None)) and callable(
            getattr(visualizer, "load_state_dict", None)
        ):
            # which tracker runs to continue
            manager.register("visualizer", visualizer, after_val=True)
        # after_val: what a validation may change, also kept after the validation that
        # follows a checkpoint (cadence.checkpoint.after_val)
        manager.register("optimization", _Optimization(strategy, trained), after_val=True,
                         in_checkpoint=False)  # fmt: skip
        #: whether :meth:`load_or_resume` has run
        self.loaded = False
        #: the resolved config's text, for ``meta`` (set when the run starts)
        self.cfg_text = ""

    def register_model(self, module: nn.Module) -> None:
        """Save this rank's non-parameter buffers of ``module`` (the unwrapped model)."""
        from .rank_state import RankLocalBuffers

        self.manager.register("buffers", RankLocalBuffers(module), per_rank=True, shared=False)

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
        if self.loaded:
            return
        self.loaded = True
        self._load_or_resume()
        runner = self._runner
        if runner.visualizer is not None and len(runner.cfg):
            runner.visualizer.add_config(runner.cfg)

    def _load_or_resume(self) -> None:
        runner, paths = self._runner, self._paths
        training = runner.train_loop_or_none is not None
        if training:
            plan = ResumePlan.of(paths.resume, paths.load_from, runner.strategy.world_size)
            if plan.auto and self._auto_resume(plan):
                return
        if not training or not paths.resume:
            if paths.load_from is not None:
                self.load_checkpoint(paths.load_from)
            return
        if isinstance(paths.resume, str) or paths.load_from is not None:
            self.resume(paths.resume if isinstance(paths.resume, str) else str(paths.load_from))
            return
        path = self._resume_latest(foreign=self._foreign_work_dir())
        if path is None:
            runner.logger.info(f"resume=True but no checkpoint in {paths.work_dir}; starting anew")
        else:
            self._note_resumed(path)

    def _foreign_work_dir(self) -> bool:
        """Whether no cadence run has recorded itself in the work dir (an mmengine one)."""
        from .run_record import RECORD_FILE

        return not os.path.isfile(os.path.join(self._paths.work_dir, RECORD_FILE))

    def _auto_resume(self, plan: ResumePlan) -> bool:
        """Resume from the work dir's newest verified checkpoint if there is one (True);
        else leave ``resume`` as the run's first start would have it (False)."""
        paths = self._paths
        paths.resume = True  # what hooks see while the checkpoint loads
        path = self._resume_latest(restarted=plan.attempt.restarted)
        if path is not None:
            self._note_resumed(path, f" (auto-resume: {plan.reason})")
            return True
        paths.resume = plan.configured
        self._runner.logger.info(
            f"auto-resume ({plan.reason}): no checkpoint in {paths.work_dir} yet; "
            + ("starting as configured" if paths.resume or paths.load_from else "starting anew")
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
        paths = self._paths
        resume, load_from = paths.resume, paths.load_from
        if plan.auto or (resume is True and load_from is None):
            return None
        held = self.manager.held()
        if not held:
            return None
        source = resume if isinstance(resume, str) else None
        if resume is True:
            source = load_from
        if source is not None and any(paths.holds(source, os.path.dirname(p)) for p in held):
            return None
        names = ", ".join(os.path.basename(p) for p in held[:4]) + (", ..." if held[4:] else "")
        return (
            f"work dir {paths.work_dir} holds the checkpoints of an earlier run ({names}), "
            "which this new run would overwrite. Continue that run (--resume, or resume=True "
            "in the config), train in another work dir (--work-dir), or let this run replace "
            "them (--overwrite, or overwrite=True in the config)"
        )

    @property
    def initialises_weights(self) -> bool:
        """Whether ``train()`` calls the model's ``init_weights`` before loading a checkpoint."""
        return ResumePlan.of(self._paths.resume, self._paths.load_from).initialises_weights

    def _resume_latest(self, *, foreign: bool = False, restarted: bool = False) -> str | None:
        """Resume from the newest checkpoint of the work dir that can be used; return its
        path, or None where there is none (:meth:`CheckpointManager.candidates`; the
        search's verdict when all fail: :class:`~cadence.checkpoint.ResumeSearch`)."""
        from ..checkpoint.resume_search import UNUSABLE

        search = self.manager.candidates(foreign=foreign)
        for path in search.paths:
            try:
                self._restore(path)
            except UNUSABLE as e:
                if not search.skip(path, e):
                    raise
                continue
            search.resumed(path)
            return path
        search.exhausted(restarted=restarted)
        return None

    def _restore(self, path: str, map_location: Any = "cpu", **options: bool) -> None:
        """Read ``path``, let the hooks see it, restore the run from it: the one route of
        every resume (runner -> manager -> hooks -> manager -> strategy)."""
        checkpoint = self.manager.read(path, map_location, after_val=True)
        self._after_load(checkpoint)
        self.manager.restore(path, checkpoint, self._trained(), **options)

    def _after_load(self, checkpoint: dict[str, Any]) -> None:
        # As in mmengine: hooks see (and may edit) the checkpoint before it is restored.
        self._runner.call_hook("after_load_checkpoint", checkpoint=checkpoint)
        if "loops" not in checkpoint and "meta" in checkpoint:  # mmengine: position in meta
            meta = checkpoint["meta"]
            position = {"epoch": meta.get("epoch", 0), "iter": meta.get("iter", 0)}
            checkpoint["loops"] = {"train": position}

    def _note_resumed(self, path: str, why: str = "") -> None:
        """Record (for the hooks: which folder their saved file names belong to) and log it.
        A checkpoint of the work dir whose validation had not run gets its after-validation
        file once the resumed run has run it."""
        paths, runner = self._paths, self._runner
        paths.resumed_from = path
        loop = runner.train_loop_or_none
        if getattr(loop, "val_pending", False) and paths.holds(path, paths.work_dir):
            self.manager.await_validation(path)
        runner.logger.info(f"Resumed from {path} at epoch {runner.epoch}, iter {runner.iter}{why}")

    def load_checkpoint(
        self,
        filename: str,
        map_location: str = "cpu",
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    ) -> dict[str, Any]:
        """Load model weights from ``filename`` (optimizer and position untouched)."""
        manager = self.manager
        checkpoint = manager.read(filename, map_location)
        self._after_load(checkpoint)
        manager.load_weights(
            self._trained().require_model(), checkpoint, strict=strict, revise_keys=revise_keys
        )
        self._runner.logger.info(f"Loaded weights from {filename}")
        return checkpoint

    def resume(
        self,
        filename: str,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
        map_location: str = "cpu",
    ) -> None:
        """Restore everything that moves from ``filename`` and continue from its position."""
        self._restore(
            filename, map_location, resume_optimizer=resume_optimizer,
            resume_param_scheduler=resume_param_scheduler,
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
        import torch

        runner = self._runner
        out_dir = self._paths.stage(out_dir, backend_args or file_client_args)
        meta = dict(meta or {})
        epoch, it = runner.epoch, runner.iter
        meta.setdefault("epoch", epoch + 1 if by_epoch else epoch)
        meta.setdefault("iter", it if by_epoch else it + 1)
        meta.update(
            cadence_version=__version__, torch_version=str(torch.__version__),
            time=time.strftime("%Y%m%d_%H%M%S"), seed=runner.seed,
            experiment_name=runner.experiment_name, cfg=self.cfg_text,
            world_size=runner.strategy.world_size,
        )  # fmt: skip
        loop = runner.train_loop_or_none
        dataset = getattr(getattr(loop, "dataloader", None), "dataset", None)
        metainfo = getattr(dataset, "metainfo", None)
        if metainfo is not None:  # as mmengine: its resume and the inferencers read it
            meta.setdefault("dataset_meta", metainfo)
        manager = self.manager
        with runner.heartbeat.busy("saving a checkpoint"):  # the hang watchdog: every rank saves
            # the one route of every save: runner -> manager (the parts) -> hooks (may edit
            # them) -> manager -> strategy (its state and companion files)
            extra = manager.collect(meta)
            runner.call_hook("before_save_checkpoint", checkpoint=extra)
            return manager.save(
                os.path.join(out_dir, filename), self._trained(), extra,
                save_optimizer=save_optimizer, save_param_scheduler=save_param_scheduler,
                update_last=update_last, delete_after=delete_after, async_=async_,
                pointers=pointers, before_val=bool(getattr(loop, "val_follows", False)),
            )  # fmt: skip

    def after_validation(self) -> None:
        """The training loop's validation has finished: the checkpoints taken just before
        it record so (their after-validation files), so a resume does not validate again."""
        with self._runner.heartbeat.busy("saving the state after validation"):
            self.manager.after_validation()

    def wait_for_checkpoint(self) -> None:
        """Wait for a background checkpoint write to finish; raise its error, if any."""
        with self._runner.heartbeat.busy("waiting for a checkpoint write"):
            self.manager.wait()  # and (rank 0) uploads the work dir's logs
