"""mmengine's ``Runner`` attributes and methods, each forwarded to the part that owns it.

:class:`MMEngineNames` holds no state and decides nothing: every name reads or
calls one of the runner's parts (declared at the top of the class, made by
:class:`~cadence.runner.Runner`), so that hooks, scripts and mmengine's own tests
find ``runner.train_loop``, ``runner._train_loop``, ``runner.optim_wrapper``,
``runner.register_hook(...)``, ``runner.build_optim_wrapper(...)``... where mmengine
has them. Names read on every training step are :class:`~.forward.Forward`
attributes, which run no Python code.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .forward import Forward, Settable
from .run_loops import RunLoops

if TYPE_CHECKING:
    from torch import nn
    from torch.utils.data import DataLoader

    from ..checkpoint import CheckpointManager
    from ..config import Config
    from ..contracts import Schedulers, Trained
    from ..hooks import Hook
    from ..hooks.log_processor import LogProcessor
    from ..logging import MessageHub, MMLogger
    from ..loops import BaseLoop
    from ..optim import OptimWrapper
    from ..registry import DefaultScope
    from ..resilience.heartbeat import Heartbeat
    from ..strategies.base import BaseStrategy
    from ..visualization import Visualizer
    from .environment import RunEnvironment
    from .hook_manager import HookManager
    from .paths import RunPaths
    from .persistence import RunCheckpoints
    from .processes import Processes
    from .settings import RunSettings


class MMEngineNames:
    """mmengine's names over the runner's parts (see the module's docstring)."""

    # -------------------------------------------- the parts, made by Runner
    cfg: Config
    settings: RunSettings
    paths: RunPaths
    processes: Processes
    env: RunEnvironment
    heartbeat: Heartbeat
    hook_manager: HookManager
    persistence: RunCheckpoints
    loops: RunLoops
    trained: Trained

    if TYPE_CHECKING:  # Runner's own, which the names below use

        @property
        def model(self) -> nn.Module: ...

        def setup_env(self, env_cfg: Mapping[str, Any] | None = None) -> None: ...

    # ------------------------------------------------- reporting (env)
    logger: Settable[MMLogger] = Settable("env.logger")
    message_hub: Settable[MessageHub] = Settable("env.message_hub")
    visualizer: Settable[Visualizer] = Settable("env.visualizer")
    log_processor: Settable[LogProcessor] = Settable("env.log_processor")
    timestamp: Forward[str] = Forward("env.timestamp")
    log_dir: Forward[str] = Forward("env.log_dir")
    experiment_name: Forward[str | None] = Forward("env.experiment_name", "The run's name.")
    _experiment_name: Settable[str | None] = Settable("env.experiment_name")
    build_logger: Forward[Callable[..., MMLogger]] = Forward("env.build_logger")
    build_message_hub: Forward[Callable[..., MessageHub]] = Forward("env.build_message_hub")
    build_visualizer: Forward[Callable[..., Visualizer]] = Forward("env.build_visualizer")
    build_log_processor: Forward[Callable[..., LogProcessor]] = Forward("env.build_log_processor")
    default_scope: Forward[DefaultScope | None] = Forward("env.default_scope")

    # ------------------------------------------------ trained objects
    optim_wrapper: Settable[OptimWrapper] = Settable("trained.optim_wrapper")
    param_schedulers: Settable[Schedulers | None] = Settable("trained.param_schedulers")

    # ---------------------------------------------- settings and paths
    randomness_cfg: Settable[dict[str, Any]] = Settable("settings.randomness")
    auto_scale_lr: Forward[dict[str, Any]] = Forward("settings.auto_scale_lr")
    launcher: Forward[str] = Forward("settings.launcher")
    compiled: Forward[bool] = Forward("settings.compiled", "Whether the model is compiled.")
    deterministic: Forward[bool] = Forward("settings.deterministic")
    work_dir: Forward[str] = Forward("paths.work_dir")
    resuming: Forward[bool | str] = Forward("paths.resume", "The ``resume`` setting.")
    _resume: Settable[bool | str] = Settable("paths.resume")

    # ------------------------------------------------------- processes
    strategy: Forward[BaseStrategy] = Forward("processes.strategy")
    rank: Forward[int] = Forward("processes.rank")
    world_size: Forward[int] = Forward("processes.world_size", "The number of processes.")
    seed: Forward[int | None] = Forward("processes.strategy.seed", "The base random seed.")

    @property
    def distributed(self) -> bool:
        """Whether the run has more than one process."""
        return self.processes.world_size > 1

    # ----------------------------------------------------------- loops
    stage_calls: Forward[Mapping[str, tuple[Any, ...]]] = Forward("hook_manager.stage_calls")
    train_loop_or_none: Forward[BaseLoop | None] = Forward("loops.train")
    _train_loop: Settable[BaseLoop | None] = Settable("loops.train", setter=RunLoops.set_train)
    _val_loop: Settable[BaseLoop | None] = Settable("loops.val")
    _test_loop: Settable[BaseLoop | None] = Settable("loops.test")

    @property
    def train_loop(self) -> BaseLoop:
        """The training loop, built on first use (raises when the config cannot train)."""
        loop = self.loops.get("train")
        assert loop is not None
        return loop

    @property
    def val_loop(self) -> BaseLoop | None:
        """The validation loop, or None when the config sets no validation."""
        return self.loops.get("val")

    @property
    def test_loop(self) -> BaseLoop | None:
        """The test loop, or None when the config sets no testing."""
        return self.loops.get("test")

    @property
    def train_loop_by_epoch(self) -> bool:
        """Whether training counts in epochs (True when there is no training loop)."""
        loop = self.loops.train
        return True if loop is None else bool(getattr(loop, "by_epoch", True))

    @property
    def epoch(self) -> int:
        loop = self.loops.train
        return loop.epoch if loop is not None else 0

    @property
    def iter(self) -> int:
        try:  # read by hooks every step: the common case in one expression
            return self.loops.train.iter  # type: ignore[union-attr]
        except AttributeError:
            if self.loops.train is not None:
                raise
            return 0

    @property
    def max_epochs(self) -> int:
        loop = self.loops.train
        return loop.max_epochs if loop is not None else 0

    @property
    def max_iters(self) -> int:
        loop = self.loops.train
        return loop.max_iters if loop is not None else 0

    @property
    def val_interval(self) -> int:
        """How often training validates (builds the training loop)."""
        return int(getattr(self.train_loop, "val_interval", 1))

    @property
    def val_begin(self) -> int:
        """The epoch or iteration from which training validates (builds the training loop)."""
        return int(getattr(self.train_loop, "val_begin", 1))

    @property
    def train_dataloader(self) -> DataLoader[Any]:
        return self.train_loop.dataloader

    @property
    def val_dataloader(self) -> DataLoader[Any] | None:
        loop = self.val_loop
        return loop.dataloader if loop is not None else None

    @property
    def test_dataloader(self) -> DataLoader[Any] | None:
        loop = self.test_loop
        return loop.dataloader if loop is not None else None

    @property
    def val_evaluator(self) -> Any:
        """The validation loop's evaluator (None without validation)."""
        return getattr(self.val_loop, "evaluator", None)

    @property
    def test_evaluator(self) -> Any:
        """The test loop's evaluator (None without testing)."""
        return getattr(self.test_loop, "evaluator", None)

    def build_train_loop(self, loop: BaseLoop | Mapping[str, Any]) -> BaseLoop:
        """The training loop of ``loop`` over the configured ``train_dataloader``."""
        return self.loops.build("train", loop)

    def build_val_loop(self, loop: BaseLoop | Mapping[str, Any]) -> BaseLoop:
        """The validation loop of ``loop`` over the configured dataloader and evaluator."""
        return self.loops.build("val", loop)

    def build_test_loop(self, loop: BaseLoop | Mapping[str, Any]) -> BaseLoop:
        """The test loop of ``loop`` over the configured dataloader and evaluator."""
        return self.loops.build("test", loop)

    # ----------------------------------------------------------- hooks
    @property
    def hooks(self) -> list[Hook]:
        """The registered hooks, in the order they run."""
        return self.hook_manager.hooks

    @property
    def _hooks(self) -> list[Hook]:
        # mmengine's attribute: its tests read it and set it to [] to start over
        return self.hook_manager.hooks

    @_hooks.setter
    def _hooks(self, hooks: Sequence[Hook]) -> None:
        self.hook_manager.clear()
        for hook in hooks:
            self.hook_manager.register(hook)

    def register_hook(
        self, hook: Hook | Mapping[str, Any], priority: int | str | None = None
    ) -> None:
        """Add a hook (object or config dict); its priority is ``priority`` if given, else
        the config's ``priority`` key, else the hook's own."""
        self.hook_manager.register(hook, priority=priority)

    def register_default_hooks(self, hooks: Mapping[str, Any] | None = None) -> None:
        """Register the default hooks updated by ``hooks`` (None removes one)."""
        self.hook_manager.register_defaults(hooks)

    def register_custom_hooks(self, hooks: Sequence[Hook | Mapping[str, Any]]) -> None:
        """Register each of ``hooks`` (objects or config dicts)."""
        for hook in hooks:
            self.hook_manager.register(hook)

    def register_hooks(
        self,
        default_hooks: Mapping[str, Any] | None = None,
        custom_hooks: Sequence[Hook | Mapping[str, Any]] | None = None,
    ) -> None:
        """:meth:`register_default_hooks`, then :meth:`register_custom_hooks`."""
        self.hook_manager.register_defaults(default_hooks)
        self.register_custom_hooks(custom_hooks or ())

    def get_hooks_info(self) -> str:
        """For each stage, its hooks in order as ``(PRIORITY) ClassName``."""
        return self.hook_manager.mmengine_info()

    def describe_hooks(self) -> str:
        """For each stage, the hooks that run there, by name with priorities (hooks.txt)."""
        return self.hook_manager.describe()

    def call_hook(self, fn_name: str, **kwargs: Any) -> None:
        """Call stage ``fn_name`` on every hook that implements it."""
        self.hook_manager.call(fn_name, self, **kwargs)

    def blame_hook(self, exc: BaseException, fn_name: str, fn: Any) -> None:
        """Note on ``exc`` the hook whose function ``fn`` (from ``stage_calls``) raised it."""
        self.hook_manager.blame(exc, fn_name, fn)

    # ----------------------------------------------------- checkpoints
    checkpoints: Forward[CheckpointManager] = Forward("persistence.manager")
    initialises_weights: Forward[bool] = Forward("persistence.initialises_weights")

    def load_or_resume(self) -> None:
        """Resume (``resume=True`` or a path) or load weights (``load_from``), once."""
        self.persistence.load_or_resume()

    def load_checkpoint(
        self,
        filename: str,
        map_location: str = "cpu",
        strict: bool = False,
        revise_keys: Sequence[tuple[str, str]] = ((r"^module\.", ""),),
    ) -> dict[str, Any]:
        """Load model weights from ``filename`` (optimizer and position untouched)."""
        return self.persistence.load_checkpoint(filename, map_location, strict, revise_keys)

    def resume(
        self,
        filename: str,
        resume_optimizer: bool = True,
        resume_param_scheduler: bool = True,
        map_location: str = "cpu",
    ) -> None:
        """Restore everything that moves from ``filename`` and continue from its position."""
        self.persistence.resume(filename, resume_optimizer, resume_param_scheduler, map_location)

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
        """Write a checkpoint of the whole run to ``out_dir/filename``; return its path
        (:meth:`RunCheckpoints.save_checkpoint <.persistence.RunCheckpoints.save_checkpoint>`)."""
        return self.persistence.save_checkpoint(
            out_dir, filename, file_client_args, save_optimizer, save_param_scheduler, meta,
            by_epoch, backend_args, update_last, async_, delete_after, pointers,
        )  # fmt: skip

    def wait_for_checkpoint(self) -> None:
        """Wait for a background checkpoint write to finish; raise its error, if any."""
        self.persistence.wait_for_checkpoint()

    def after_validation(self) -> None:
        """The training loop's validation has finished: the checkpoints taken just before it
        get their after-validation files (cadence's; ``cadence.checkpoint.after_val``)."""
        self.persistence.after_validation()

    # --------------------------------------------------------- builders
    @property
    def model_name(self) -> str:
        """The model's class name (from its config's ``type`` until it is built)."""
        from .assemble import model_name

        return model_name(self.trained.model, self.settings.model, self.processes.strategy)

    def build_model(self, model: nn.Module | Mapping[str, Any]) -> nn.Module:
        """``model`` built from ``MODELS`` (a module is returned as a cadence model)."""
        from .assemble import build_model

        return build_model(model)

    def wrap_model(
        self, model_wrapper_cfg: Mapping[str, Any] | None, model: nn.Module
    ) -> nn.Module:
        """``model`` placed and wrapped by the strategy (or by ``model_wrapper_cfg``); sets
        up the strategy's environment first."""
        from .assemble import wrap_model

        self.setup_env()
        return wrap_model(self.processes.strategy, model, model_wrapper_cfg)

    def build_optim_wrapper(self, optim_wrapper: Any) -> OptimWrapper:
        """The optimizer wrapper(s) of ``optim_wrapper`` over :attr:`model`'s parameters
        (a built wrapper is returned as is)."""
        from ..optim import OptimWrapper, build_optim_wrapper

        if isinstance(optim_wrapper, OptimWrapper):
            return optim_wrapper
        module = self.processes.strategy.unwrap(self.model)
        built: OptimWrapper = build_optim_wrapper(module, optim_wrapper, key_path="optim_wrapper")
        return built

    def scale_lr(self, optim_wrapper: Any, auto_scale_lr: Mapping[str, Any] | None = None) -> None:
        """Scale ``optim_wrapper``'s learning rates by the total batch size over
        ``auto_scale_lr.base_batch_size`` (before the schedulers are built)."""
        from .assemble import scale_lr_for

        loop = self.loops.train
        loader = (
            loop.dataloader if loop is not None else self.settings.loop_parts["train_dataloader"]
        )
        scale_lr_for(
            optim_wrapper, auto_scale_lr, schedulers=self.trained.param_schedulers,
            world_size=self.processes.world_size, loader=loader, logger=self.env.logger,
        )  # fmt: skip

    def build_param_scheduler(self, scheduler: Any) -> Schedulers:
        """The schedulers of ``scheduler`` for :attr:`optim_wrapper`."""
        from .assemble import build_schedulers_for

        return build_schedulers_for(self.trained.optim_wrapper, scheduler, self.loops.train)

    @staticmethod
    def build_dataloader(
        dataloader: DataLoader[Any] | Mapping[str, Any],
        seed: int | None = None,
        diff_rank_seed: bool = False,
    ) -> DataLoader[Any]:
        """A DataLoader from its config (a DataLoader is returned as is)."""
        from ..dataset import build_dataloader

        return build_dataloader(dataloader, seed=seed, diff_rank_seed=diff_rank_seed)

    def build_evaluator(self, evaluator: Any) -> Any:
        """An ``Evaluator`` from a metric config, a list of them, ``dict(metrics=...)``
        or an evaluator (returned as is)."""
        from ..evaluator import build_evaluator

        return build_evaluator(evaluator)

    # ------------------------------------------------------ environment
    def set_randomness(
        self, seed: int | None, diff_rank_seed: bool = False, deterministic: bool = False
    ) -> None:
        """Use this seed (None: draw one that all ranks share) and determinism for the run;
        seeds at once when the environment is set up."""
        self.settings.randomness = dict(
            seed=seed, diff_rank_seed=diff_rank_seed, deterministic=deterministic
        )
        if self.processes.ready:
            self.processes.reseed()

    def dump_config(self) -> None:
        """Rank 0 writes the config to ``work_dir`` under its file's name (or
        ``<timestamp>.py`` for a config that has no file)."""
        if self.processes.rank != 0:
            return
        filename = self.cfg.filename
        name = os.path.basename(filename) if filename else f"{self.env.timestamp}.py"
        self.cfg.dump(os.path.join(self.paths.work_dir, name))


__all__ = ["MMEngineNames"]
