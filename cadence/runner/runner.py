"""The Runner: builds a run's parts lazily from a config and drives the loops.

The runner orchestrates. It owns a few parts with one job each (the settings as
configured, the paths, the processes, the reporting environment, the hooks, the
checkpoints, the loops and the trained objects) and runs them in order; mmengine's
names for what they hold live in :class:`~.mmengine_names.MMEngineNames`. Device
placement, wrapping, precision and checkpoint I/O belong to the strategy; loops,
dataloaders, evaluators, optimizers and schedulers are built by the packages that
define them.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from torch import nn

from ..contracts import Trained
from ..dataset.release import release_workers
from ..registry import RUNNERS, STRATEGIES
from ..resilience.auto_resume import ResumePlan
from ..resilience.hang_watch import watching_for_hangs
from ..resilience.heartbeat import Heartbeat
from ..resilience.preempted import TrainingPreempted
from ..resilience.work_dir_lock import lock_for_training
from .assemble import assemble, train_facts
from .auto_scale import apply_auto_scale_workers, check_auto_scale_workers
from .environment import RunEnvironment
from .hook_manager import DEFAULT_HOOKS, HookManager
from .lifecycle import register_exit_release, released_on_error
from .mmengine_names import MMEngineNames
from .paths import RunPaths, check_url_keys
from .persistence import RunCheckpoints
from .processes import Processes, launch_rank
from .run_loops import RunLoops
from .run_record import GitProbe, record_run_start
from .settings import RUNNER_KEYS, TRIPLES, RunSettings
from .setup import default_setup, save_hook_table, warn_misspelled_keys

if TYPE_CHECKING:
    from ..config.config import Config
    from ..loops import BaseLoop


@RUNNERS.register_module()
class Runner(MMEngineNames):
    """Train, validate and test a model described by a config.

    Every argument is the top-level config key of the same name; see
    :data:`RUNNER_KEYS`. Construction builds the cheap parts (logger, message
    hub, visualizer, log processor, hooks); the model, data, optimizer and the
    strategy's environment are built on first use, by :meth:`train`,
    :meth:`val`, :meth:`test` or :attr:`model`.
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
        from ..config import Config  # here, not at import: the config package is not light

        if data_preprocessor is not None and isinstance(model, Mapping):
            model = {**model}
            model.setdefault("data_preprocessor", data_preprocessor)
        loop_parts = dict(
            train_dataloader=train_dataloader, train_cfg=train_cfg, optim_wrapper=optim_wrapper,
            val_dataloader=val_dataloader, val_cfg=val_cfg, val_evaluator=val_evaluator,
            test_dataloader=test_dataloader, test_cfg=test_cfg, test_evaluator=test_evaluator,
        )  # fmt: skip
        self.settings = RunSettings(
            model, loop_parts, param_scheduler=param_scheduler,
            auto_scale_lr=dict(auto_scale_lr or {}),
            auto_scale_workers=dict(auto_scale_workers or {}), default_hooks=default_hooks,
            custom_hooks=custom_hooks or (), launcher=launcher, env_cfg=dict(env_cfg or {}),
            randomness=dict(randomness or {}), compile=compile, overwrite=bool(overwrite),
            log_level=log_level, log_processor=dict(log_processor or {}), visualizer=visualizer,
            default_scope=default_scope,
        )  # fmt: skip
        self.paths = RunPaths(work_dir, load_from, resume, backend_args)
        check_auto_scale_workers(self.settings.auto_scale_workers)
        self.cfg = cfg if isinstance(cfg, Config) else Config(dict(cfg or {}))
        self.processes = Processes(self._strategy(strategy), self.settings)
        #: what the loops bump at each step boundary, for the hang watchdog
        self.heartbeat = Heartbeat()
        self.env = RunEnvironment(self.paths, self.cfg, self.settings, experiment_name)
        self.hook_manager = HookManager(self.heartbeat)
        #: the model, optimizer wrapper and schedulers, None until built (:meth:`prepare`):
        #: the runner's interface (:class:`~cadence.contracts.RunnerProtocol`) describes a
        #: prepared run. The runner owns them; the strategy is handed them when it acts on them
        self.trained = Trained()
        self.persistence = RunCheckpoints(
            self, self.processes.strategy, self.paths, self.env, self.hook_manager,
            trained=lambda: self.trained,
        )  # fmt: skip
        self.loops = RunLoops(
            self, self.settings, self.persistence.manager, build=self._build_configured_loop
        )
        #: Set when training ended early on SIGTERM/SIGUSR1 (see PreemptionHook).
        self.preempted: TrainingPreempted | None = None
        self._started = False  # the start-up that needs the processes (:meth:`_setup`)
        self.hook_manager.register_defaults(self.settings.default_hooks)
        for hook in self.settings.custom_hooks:
            self.hook_manager.register(hook)

    def _strategy(self, strategy: Any) -> Any:
        """The strategy of the ``strategy`` key (a config: the launcher's default type)."""
        if not isinstance(strategy, Mapping) and strategy is not None:
            return strategy
        from ..strategies.base import default_strategy_type  # the checkpoint package

        cfg = dict(strategy or {})
        cfg.setdefault("type", default_strategy_type(self.settings.launcher))
        return STRATEGIES.build(cfg, key_path="strategy")

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
        if self._started:
            return
        self._started = True
        settings, env = self.settings, self.env
        env.agree_on_start(self.processes.rank, self.processes.world_size)
        before = dict(settings.default_hooks or {})
        # before anything is built
        apply_auto_scale_workers(settings, self.processes.world_size, self.cfg, env.logger)
        for name, hook in (settings.default_hooks or {}).items():
            if hook is not None and hook != before.get(name):
                self.hook_manager.replace(name, hook)  # e.g. the rescaled checkpoint interval
        self.persistence.cfg_text = default_setup(self)
        save_hook_table(self, self.hook_manager.describe())

    def _setup_env(self) -> None:
        """The strategy's environment: process group, device, seeds (writes no file)."""
        if self.processes.set_up():  # the first time: released at exit, if still set up
            register_exit_release(self)

    def setup_env(self, env_cfg: Mapping[str, Any] | None = None) -> None:
        """Set up the strategy's environment (process group, device, seeds, cuDNN flags)
        now instead of at the first ``train``/``val``/``test``; ``env_cfg`` replaces the
        configured one when given."""
        if env_cfg is not None and not self.processes.ready:
            from ..resilience.hang_watch import hang_timeout_from

            hang_timeout_from(env_cfg)  # refused before it replaces the configured one
            self.settings.env_cfg = dict(env_cfg)
        self._setup()

    def _build_configured_loop(self, mode: str, loop_cfg: Any) -> BaseLoop:
        builder: Callable[[Any], BaseLoop] = getattr(self, f"build_{mode}_loop")
        return builder(loop_cfg)  # a subclass's override of mmengine's builder counts

    def build_loop(self, mode: str) -> Any:
        """Build the ``train``/``val``/``test`` loop from its config triple and make it the
        run's."""
        return self.loops.build_configured(mode)

    def prepare(self, train: bool = True) -> None:
        """Build and set up the model (and, to train, its optimizer wrapper and schedulers)
        now instead of at the first ``train``/``val``/``test``; nothing when done already."""
        trained = self.trained
        if trained.model is not None and (not train or trained.optim_wrapper is not None):
            return
        facts = optim_cfg = sched_cfg = None
        settings = self.settings
        if train:
            facts = train_facts(
                self.train_loop, settings.auto_scale_lr, self.processes.world_size, self.env.logger
            )
            optim_cfg, sched_cfg = settings.loop_parts["optim_wrapper"], settings.param_scheduler
        strategy = self.processes.strategy
        made = trained.model is None
        model, optim_wrapper, schedulers = assemble(
            strategy, trained.model, settings.model, compile=settings.compile,
            optim_cfg=optim_cfg, scheduler_cfg=sched_cfg, facts=facts,
        )  # fmt: skip
        trained.model = model
        if made:  # its buffers are part of every checkpoint from now on
            self.persistence.register_model(strategy.unwrap(model))
        if train:
            trained.optim_wrapper, trained.param_schedulers = optim_wrapper, schedulers

    # ------------------------------------------------------------- running
    def close(self, *, barrier: bool = True) -> None:
        """Release what the strategy set up (process group, engine) now.

        The process does it at exit, and train/val/test when they raise (with
        ``barrier=False``: a failed rank does not wait for its peers). A later
        train/val/test (or :attr:`model`) sets the strategy up again. The strategy is
        handed the run's objects: it drops those wrapped over what it releases (a
        distributed strategy's model and optimizer wrapper), which are then built anew.
        """
        self.processes.release(self.trained, barrier=barrier)

    def train(self) -> nn.Module:
        """Train (validating as configured); return the trained model."""
        with released_on_error(self):
            try:
                return self._train()
            finally:
                self.paths.lock.release()

    def _train(self) -> nn.Module:
        settings, paths = self.settings, self.paths
        # rank 0's run record needs git's facts: asked now, read after the parts are built
        git_probe = GitProbe(os.getcwd()) if launch_rank(settings.launcher) == 0 else None
        self._setup_env()
        # the work dir is this run's before it writes anything there (log folder, config);
        # the ranks agree on the plan first (a collective), then rank 0 alone checks it
        processes = self.processes
        plan = ResumePlan.of(paths.resume, paths.load_from, processes.world_size)
        refuse = None
        if not settings.overwrite:
            refuse = functools.partial(self.persistence.earlier_run, plan)
        from ..checkpoint.pointer import _safe_target

        lock_for_training(paths.lock, processes.rank, processes.world_size,
                          self.env.experiment_name, self.env.logger, refuse=refuse,
                          pointed_at=_safe_target)  # fmt: skip
        self._setup()
        # the model first, as mmengine builds it with the runner: its parameters' initial
        # draws come before those of anything the loops build (an iteration-based loop's
        # data iterator draws its base seed when it is made)
        self.prepare(train=False)
        loops = self.loops
        loops.build_configured("train")
        if loops.configured("val") and loops.val is None:
            loops.build_configured("val")
        self.prepare(train=True)
        self.call_hook("before_run")
        self._init_weights()
        self.persistence.load_or_resume()
        record_run_start(self, git_probe)
        train_loop = self.train_loop
        self.optim_wrapper.initialize_count_status(
            self.model, train_loop.iter, train_loop.max_iters
        )
        try:
            model = self._run_loop(train_loop)
        except TrainingPreempted as stop:  # the checkpoint is written; end the run cleanly
            self.env.logger.warning(str(stop))
            self.preempted = stop
            model = self.model
        self.call_hook("after_run")
        self.persistence.wait_for_checkpoint()
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
        loop = getattr(self.loops, mode)
        if loop is None:
            loop = self.loops.build_configured(mode)
        self.prepare(train=False)
        self.call_hook("before_run")
        self.persistence.load_or_resume()
        metrics: dict[str, Any] = self._run_loop(loop)
        self.call_hook("after_run")
        self.persistence.wait_for_checkpoint()
        return metrics

    def _run_loop(self, loop: Any) -> Any:
        """Run ``loop`` under the hang watchdog; if it raises, stop live progress bars (so the
        error prints on a sane terminal) and still let a background checkpoint write finish."""
        try:
            with watching_for_hangs(self, self.settings.hang_timeout):
                return loop.run()
        except BaseException:
            from ..logging.progress import stop_live_bars

            stop_live_bars()
            try:
                self.persistence.wait_for_checkpoint()
            except Exception as exc:  # the loop's error is the one to report
                self.env.logger.error(f"the background checkpoint write failed too: {exc}")
            raise
        finally:  # workers end with the call that started them (cadence/dataset/release.py)
            release_workers(loop)
            if loop is self.loops.train:
                release_workers(self.loops.val)

    def _init_weights(self) -> None:
        init = getattr(self.processes.strategy.unwrap(self.model), "init_weights", None)
        if callable(init) and self.persistence.initialises_weights:
            init()

    # ---------------------------------------------------------- the model
    @property
    def model(self) -> nn.Module:
        """The model as set up by the strategy, built on first use: that sets up the
        strategy's environment (process group) too, released like train/val/test's."""
        model = self.trained.model
        if model is None:
            with released_on_error(self):
                self._setup()
                self.prepare(train=False)
            model = self.trained.model
            assert model is not None
        return model

    @model.setter
    def model(self, model: nn.Module) -> None:
        """Replace the model the loops run (mmengine's ``PrepareTTAHook`` wraps it so
        before testing)."""
        self.trained.model = model


#: mmengine's FlexibleRunner is the same class here: strategies are always pluggable.
FlexibleRunner = Runner
RUNNERS.register_module(name="FlexibleRunner", module=Runner)

__all__ = ["DEFAULT_HOOKS", "FlexibleRunner", "RUNNER_KEYS", "Runner", "TRIPLES"]
