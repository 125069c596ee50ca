"""The Runner: builds a run's parts lazily from a config and drives the loops.

The runner orchestrates. Device placement, wrapping, precision and checkpoint
I/O belong to its strategy; loops, dataloaders, evaluators, optimizers and
schedulers are built by the packages that define them.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from torch import nn

from ..dataset.release import release_workers
from ..hooks.preempted import TrainingPreempted
from ..registry import RUNNERS, STRATEGIES
from ..utils.heartbeat import Heartbeat
from .assemble import assemble, train_facts
from .auto_resume import ResumePlan
from .auto_scale import apply_auto_scale_workers, check_auto_scale_workers
from .builders import BuildersMixin
from .hang_watch import hang_timeout_from, watching_for_hangs
from .hook_api import DEFAULT_HOOKS, HooksMixin
from .hook_manager import HookManager, as_list
from .lifecycle import register_exit_release, released_on_error
from .paths import RunPaths, check_url_keys
from .persistence import PersistenceMixin
from .properties import PropertiesMixin
from .run_record import GitProbe, record_run_start
from .setup import default_setup, save_hook_table, warn_misspelled_keys
from .startup import StartupMixin, launch_rank
from .work_dir_lock import WorkDirLock, lock_for_training

if TYPE_CHECKING:
    import logging

    from ..config.config import Config
    from ..logging import LogProcessor, MessageHub
    from ..loops.base_loop import BaseLoop
    from ..optim import OptimWrapper
    from ..strategies.base import BaseStrategy
    from ..visualization import Visualizer

#: Top-level config keys the runner reads (mmengine's Runner/FlexibleRunner keys).
RUNNER_KEYS = (
    "model", "work_dir", "train_dataloader", "val_dataloader", "test_dataloader",
    "train_cfg", "val_cfg", "test_cfg", "auto_scale_lr", "optim_wrapper", "param_scheduler",
    "val_evaluator", "test_evaluator", "default_hooks", "custom_hooks", "data_preprocessor",
    "load_from", "resume", "launcher", "env_cfg", "log_processor", "log_level", "visualizer",
    "default_scope", "randomness", "experiment_name", "strategy", "compile", "auto_scale_workers",
    "backend_args", "overwrite",
)  # fmt: skip

_TRIPLES = {
    "train": ("train_dataloader", "train_cfg", "optim_wrapper"),
    "val": ("val_dataloader", "val_cfg", "val_evaluator"),
    "test": ("test_dataloader", "test_cfg", "test_evaluator"),
}


@RUNNERS.register_module()
class Runner(
    PropertiesMixin, HooksMixin, BuildersMixin, StartupMixin, PersistenceMixin
):  # fmt: skip
    """Train, validate and test a model described by a config.

    Every argument is the top-level config key of the same name; see
    :data:`RUNNER_KEYS`. Construction builds the cheap parts (logger, message
    hub, visualizer, log processor, hooks; :mod:`.startup`); the model, data,
    optimizer and the strategy's environment are built on first use, by
    :meth:`train`, :meth:`val`, :meth:`test` or :attr:`model`.
    """

    def __init__(
        self,
        model: nn.Module | Mapping[str, Any],
        work_dir: str,
        train_dataloader: Any = None,
        val_dataloader: Any = None,
        test_dataloader: Any = None,
        train_cfg: Mapping[str, Any] | None = None,
        val_cfg: Mapping[str, Any] | None = None,
        test_cfg: Mapping[str, Any] | None = None,
        auto_scale_lr: Mapping[str, Any] | None = None,
        optim_wrapper: Any = None,
        param_scheduler: Any = None,
        val_evaluator: Any = None,
        test_evaluator: Any = None,
        default_hooks: Mapping[str, Any] | None = None,
        custom_hooks: Sequence[Any] | None = None,
        data_preprocessor: Mapping[str, Any] | None = None,
        load_from: str | None = None,
        resume: bool | str = False,
        launcher: str = "none",
        env_cfg: Mapping[str, Any] | None = None,
        log_processor: Mapping[str, Any] | None = None,
        log_level: str | int = "INFO",
        visualizer: Any = None,
        default_scope: str | None = "cadence",
        randomness: Mapping[str, Any] | None = None,
        experiment_name: str | None = None,
        cfg: Config | Mapping[str, Any] | None = None,
        strategy: Any = None,
        compile: bool | Mapping[str, Any] = False,
        auto_scale_workers: Mapping[str, Any] | None = None,
        backend_args: Mapping[str, Any] | None = None,
        overwrite: bool = False,
    ) -> None:
        given = dict(
            train_dataloader=train_dataloader, train_cfg=train_cfg, optim_wrapper=optim_wrapper,
            val_dataloader=val_dataloader, val_cfg=val_cfg, val_evaluator=val_evaluator,
            test_dataloader=test_dataloader, test_cfg=test_cfg, test_evaluator=test_evaluator,
        )  # fmt: skip
        for mode, keys in _TRIPLES.items():
            unset = [k for k in keys if given[k] is None]
            if unset and len(unset) != len(keys):
                raise ValueError(
                    f"{', '.join(keys)} should be either all None or not None to {mode}; "
                    f"missing: {', '.join(unset)}"
                )
        if param_scheduler is not None and optim_wrapper is None:
            raise ValueError(
                "param_scheduler should be None when optim_wrapper is None (schedulers change "
                f"the optimizer's values), got {param_scheduler!r}"
            )
        from ..config import Config  # here, not at import: the config package is not light

        self.paths = RunPaths(work_dir, load_from, resume, backend_args)
        self._cfg = cfg if isinstance(cfg, Config) else Config(dict(cfg or {}))
        self._work_dir = self.paths.work_dir
        self._work_dir_lock = WorkDirLock(self._work_dir)
        #: a fresh training run may replace the checkpoints an earlier run left in work_dir
        self._overwrite = bool(overwrite)
        if data_preprocessor is not None and isinstance(model, Mapping):
            model = {**model}
            model.setdefault("data_preprocessor", data_preprocessor)
        self._model_cfg: Any = model
        self._model: nn.Module | None = None
        self._given = given
        self._param_scheduler_cfg = param_scheduler
        self._auto_scale_lr = dict(auto_scale_lr or {})
        self._auto_scale_workers = dict(auto_scale_workers or {})
        check_auto_scale_workers(self._auto_scale_workers)
        self._default_hooks = default_hooks
        self._custom_hooks = as_list(custom_hooks)
        self._load_from = self.paths.load_from
        self._resume = self.paths.resume
        self._launcher = launcher or "none"
        self._env_cfg = dict(env_cfg or {})
        self._hang_timeout = hang_timeout_from(self._env_cfg)
        #: what the loops bump at each step boundary, for the hang watchdog
        self.heartbeat = Heartbeat()
        self._log_processor_cfg = dict(log_processor or {})
        self._log_level = log_level
        self._visualizer_cfg = visualizer
        self._default_scope = default_scope
        self.randomness_cfg = dict(randomness or {})
        self._experiment_name = experiment_name
        self._compile = compile
        self.strategy: BaseStrategy
        strategy_cfg = strategy if strategy is not None else {}
        if isinstance(strategy_cfg, Mapping):
            strategy_cfg = dict(strategy_cfg)
            from ..strategies.base import default_strategy_type  # the checkpoint package

            strategy_cfg.setdefault("type", default_strategy_type(self._launcher))
            self.strategy = STRATEGIES.build(strategy_cfg, key_path="strategy")
        else:
            self.strategy = strategy
        #: None until training is prepared (:meth:`prepare`): the runner's interface
        #: (:class:`~cadence.contracts.RunnerProtocol`) describes a prepared run
        self.optim_wrapper: OptimWrapper = None  # type: ignore[assignment]
        self.param_schedulers: list[Any] | dict[str, list[Any]] | None = None
        self._train_loop: Any = None
        self._val_loop: Any = None
        self._test_loop: Any = None
        self._hook_manager = HookManager(self.heartbeat)
        #: per stage, the hook functions in call order, taking the stage's arguments by
        #: position (``call_hook`` runs them; loops run the per-iteration ones themselves)
        self.stage_calls = self._hook_manager.stage_calls
        self._set_up = False
        self._env_ready = False
        self._exit_release = False
        self._loaded = False
        #: Set when training ended early on SIGTERM/SIGUSR1 (see PreemptionHook).
        self.preempted: TrainingPreempted | None = None
        self._timestamp = ""
        self._cfg_text = ""
        # built by _start(), below
        self.logger: logging.Logger
        self.message_hub: MessageHub
        self.visualizer: Visualizer
        self.log_processor: LogProcessor
        self._start()

    # ------------------------------------------------------------ building
    @classmethod
    def from_cfg(cls, cfg: Config | Mapping[str, Any]) -> Runner:
        """Build a runner from a config with the top-level keys of :data:`RUNNER_KEYS`.

        Other keys stay available in ``runner.cfg``; a key that looks like a
        misspelled runner key gets a warning.
        """
        from ..config import Config

        cfg = cfg if isinstance(cfg, Config) else Config(dict(cfg))
        warn_misspelled_keys(cfg.keys(), RUNNER_KEYS)
        if "model" not in cfg or "work_dir" not in cfg:
            missing = [k for k in ("model", "work_dir") if k not in cfg]
            raise KeyError(f"the config must set {', '.join(missing)} to build a Runner")
        check_url_keys(cfg)
        kwargs: dict[str, Any] = {k: copy.deepcopy(cfg.get(k)) for k in RUNNER_KEYS if k in cfg}
        kwargs.setdefault("launcher", "none")
        return cls(**kwargs, cfg=cfg)

    def _setup(self) -> None:
        """The strategy's environment (again after :meth:`close`); once per runner, then
        the start-up that needs it (timestamp agreement, auto_scale_workers, logs)."""
        self._setup_env()
        if self._set_up:
            return
        self._set_up = True
        self._agree_on_start()
        before = dict(self._default_hooks or {})
        apply_auto_scale_workers(self, self._auto_scale_workers)  # before anything is built
        for name, hook in (self._default_hooks or {}).items():
            if hook is not None and hook != before.get(name):
                self._hook_manager.replace(name, hook)  # e.g. the rescaled checkpoint interval
        self._cfg_text = default_setup(self)
        save_hook_table(self, self._hook_manager.describe())

    def _setup_env(self) -> None:
        """The strategy's environment: process group, device, seeds (writes no file)."""
        if not self._env_ready:
            self.strategy.setup_env(self._launcher, self.randomness_cfg, self._env_cfg)
            self._env_ready = True
            if not self._exit_release:
                register_exit_release(self)
                self._exit_release = True

    def build_loop(self, mode: str) -> Any:
        """Build the ``train``/``val``/``test`` loop from its config triple, with
        :meth:`build_train_loop` (``build_val_loop``, ``build_test_loop``)."""
        loop_cfg = self._given[_TRIPLES[mode][1]]
        if loop_cfg is None:
            raise RuntimeError(
                f"cannot {mode}: {', '.join(_TRIPLES[mode])} should not be None; set them in "
                f"the config to {mode}"
            )
        return getattr(self, f"build_{mode}_loop")(loop_cfg)

    def prepare(self, train: bool = True) -> None:
        """Build and set up the model (and, to train, its optimizer wrapper and schedulers)
        now instead of at the first ``train``/``val``/``test``; nothing when done already."""
        if self._model is not None and (not train or self.optim_wrapper is not None):
            return
        facts = optim_cfg = sched_cfg = None
        if train:
            facts = train_facts(self.train_loop, self._auto_scale_lr, self.world_size, self.logger)
            optim_cfg, sched_cfg = self._given["optim_wrapper"], self._param_scheduler_cfg
        self._model, optim_wrapper, schedulers = assemble(
            self.strategy, self._model, self._model_cfg, compile=self._compile,
            optim_cfg=optim_cfg, scheduler_cfg=sched_cfg, facts=facts,
        )  # fmt: skip
        if train:
            self.optim_wrapper, self.param_schedulers = optim_wrapper, schedulers

    # ------------------------------------------------------------- running
    def close(self, *, barrier: bool = True) -> None:
        """Release what the strategy set up (process group, engine) now.

        The process does it at exit, and train/val/test when they raise (with
        ``barrier=False``: a failed rank does not wait for its peers). A later
        train/val/test (or :attr:`model`) sets the strategy up again.
        """
        if not self._env_ready:
            return
        self._env_ready = False
        if self.strategy.releases_model:  # first: keep no wrapper over a dead group
            self._model = self.param_schedulers = None
            self.optim_wrapper = None  # type: ignore[assignment]
        self.strategy.teardown(barrier=barrier)

    def train(self) -> nn.Module:
        """Train (validating as configured); return the trained model."""
        with released_on_error(self):
            try:
                return self._train()
            finally:
                self._work_dir_lock.release()

    def _train(self) -> nn.Module:
        # rank 0's run record needs git's facts: asked now, read after the parts are built
        git_probe = GitProbe(os.getcwd()) if launch_rank(self._launcher) == 0 else None
        self._setup_env()
        # the work dir is this run's before it writes anything there (log folder, config);
        # the ranks agree on the plan first (a collective), then rank 0 alone checks it
        plan = ResumePlan.of(self._resume, self._load_from, self.world_size)
        refuse = None if self._overwrite else functools.partial(self.earlier_run, plan)
        lock_for_training(self._work_dir_lock, self.rank, self.world_size,
                          self._experiment_name, self.logger, refuse=refuse)  # fmt: skip
        self._setup()
        self._train_loop = self.build_loop("train")
        if self._given["val_cfg"] is not None and self._val_loop is None:
            self._val_loop = self.build_loop("val")
        self.prepare(train=True)
        self.call_hook("before_run")
        self._init_weights()
        self.load_or_resume()
        record_run_start(self, git_probe)
        self.optim_wrapper.initialize_count_status(
            self.model, self._train_loop.iter, self._train_loop.max_iters
        )
        try:
            model = self._run_loop(self._train_loop)
        except TrainingPreempted as stop:  # the checkpoint is written; end the run cleanly
            self.logger.warning(str(stop))
            self.preempted = stop
            model = self.model
        self.call_hook("after_run")
        self.wait_for_checkpoint()
        return model

    def val(self) -> dict[str, Any]:
        """Validate once; return the metrics."""
        return self._evaluate("val")

    def test(self) -> dict[str, Any]:
        """Test once; return the metrics."""
        return self._evaluate("test")

    def _evaluate(self, mode: str) -> dict[str, Any]:
        with released_on_error(self):
            return self._run_evaluation(mode)

    def _run_evaluation(self, mode: str) -> dict[str, Any]:
        self._setup()
        attr = f"_{mode}_loop"
        if getattr(self, attr) is None:
            setattr(self, attr, self.build_loop(mode))
        self.prepare(train=False)
        self.call_hook("before_run")
        self.load_or_resume()
        metrics = self._run_loop(getattr(self, attr))
        self.call_hook("after_run")
        self.wait_for_checkpoint()
        return metrics

    def _run_loop(self, loop: Any) -> Any:
        """Run ``loop`` under the hang watchdog; if it raises, stop live progress bars (so the
        error prints on a sane terminal) and still let a background checkpoint write finish."""
        try:
            with watching_for_hangs(self, self._hang_timeout):
                return loop.run()
        except BaseException:
            from ..logging.progress import stop_live_bars

            stop_live_bars()
            try:
                self.wait_for_checkpoint()
            except Exception as exc:  # the loop's error is the one to report
                self.logger.error(f"the background checkpoint write failed too: {exc}")
            raise
        finally:  # workers end with the call that started them (cadence/dataset/release.py)
            release_workers(loop)
            if loop is self._train_loop:
                release_workers(self._val_loop)

    def _init_weights(self) -> None:
        init = getattr(self.strategy.unwrap(self.model), "init_weights", None)
        if callable(init) and self.initialises_weights:
            init()

    # ---------------------------------------------------------- properties
    @property
    def model(self) -> nn.Module:
        """The model as set up by the strategy, built on first use: that sets up the
        strategy's environment (process group) too, released like train/val/test's."""
        if self._model is None:
            with released_on_error(self):
                self._setup()
                self.prepare(train=False)
        assert self._model is not None
        return self._model

    @model.setter
    def model(self, model: nn.Module) -> None:
        """Replace the model the loops run (mmengine's ``PrepareTTAHook`` wraps it so
        before testing)."""
        self._model = model

    @property
    def compiled(self) -> bool:
        """Whether the model is compiled (``compile=`` of the config)."""
        return bool(self._compile)

    @property
    def train_loop(self) -> BaseLoop:
        if self._train_loop is None:
            self._train_loop = self.build_loop("train")
        return self._train_loop

    @property
    def val_loop(self) -> BaseLoop | None:
        """The validation loop, or ``None`` when the config sets no validation."""
        if self._val_loop is None and self._given["val_cfg"] is not None:
            self._val_loop = self.build_loop("val")
        return self._val_loop

    @property
    def test_loop(self) -> BaseLoop | None:
        if self._test_loop is None and self._given["test_cfg"] is not None:
            self._test_loop = self.build_loop("test")
        return self._test_loop


#: mmengine's FlexibleRunner is the same class here: strategies are always pluggable.
FlexibleRunner = Runner
RUNNERS.register_module(name="FlexibleRunner", module=Runner)

__all__ = ["DEFAULT_HOOKS", "FlexibleRunner", "RUNNER_KEYS", "Runner"]
