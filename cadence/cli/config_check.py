"""Check a runner config without building it: every ``type`` and every argument.

:class:`ConfigChecker` walks the config the way the runner and its builders
read it, knows which registry each key path builds from (``model`` from
``MODELS``, ``train_dataloader.sampler`` from ``DATA_SAMPLERS``, ...) and checks
each component with :class:`~cadence.cli.component_check.ComponentChecker`,
counting what the builders pass themselves (a loop's ``runner``, an
optimizer's parameters). It collects every problem instead of stopping at the
first one.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from ..config import Config
from ..loops.eval_sets import eval_set_paths
from ..optim.optimizer.nonfinite import GUARD_KEYS
from ..registry import (
    DATA_SAMPLERS,
    DATASETS,
    EVALUATOR,
    HOOKS,
    LOG_PROCESSORS,
    LOOPS,
    METRICS,
    MODEL_WRAPPERS,
    MODELS,
    OPTIM_WRAPPER_CONSTRUCTORS,
    OPTIM_WRAPPERS,
    OPTIMIZERS,
    PARAM_SCHEDULERS,
    RUNNERS,
    STRATEGIES,
    TRANSFORMS,
    VISBACKENDS,
    VISUALIZERS,
    default_scope,
)
from ..utils import closest_names, did_you_mean
from .component_check import NOT_ARGUMENTS, ComponentChecker, Problem, as_items, join
from .value_check import LOOP_RULES, check_rules, check_sections

_DATALOADER_KEYS = (
    "dataset", "sampler", "batch_sampler", "collate_fn", "worker_init_fn",
    "num_batch_per_epoch", "disable_subprocess_warning", "shuffle",
)  # fmt: skip


class ConfigChecker(ComponentChecker):
    """Validate every component of a runner config; see the module docstring."""

    #: what the schedulers are built over when their validation runs: the config's
    #: optimizer over a stand-in parameter, once it passed its own checks
    _scheduler_stand_ins: dict[str, Any] | None = None

    # ------------------------------------------------------------ the config
    def run(self) -> list[Problem]:
        """Check the whole config; return every problem found (also in ``problems``)."""
        cfg = self.cfg
        with default_scope(cfg.get("default_scope", "cadence")):
            self._top_level_keys()
            check_sections(cfg, self._report)
            check_rules(cfg.get("train_cfg"), "train_cfg", LOOP_RULES, self._report)
            if "runner_type" in cfg:
                self.component(dict(type=cfg.runner_type), "runner_type", RUNNERS)
            self._model()
            if cfg.get("train_dataloader") is not None:
                self.dataloader(cfg.get("train_dataloader"), "train_dataloader")
            for mode in ("val", "test"):  # one set, or several (a list or a dict by name)
                loaders, evaluators = cfg.get(f"{mode}_dataloader"), cfg.get(f"{mode}_evaluator")
                for lpath, loader, epath, evaluator in eval_set_paths(loaders, evaluators, mode):
                    if loader is not None:
                        self.dataloader(loader, lpath)
                    if evaluator is not None:
                        self.evaluator(evaluator, epath)
            self._loops()
            if cfg.get("optim_wrapper") is not None:
                self.optim_wrapper(cfg.optim_wrapper, "optim_wrapper")
            if cfg.get("param_scheduler") is not None:
                self.schedulers(cfg.param_scheduler, "param_scheduler")
            self._hooks()
            self._runtime_parts()
        return self.problems

    def _top_level_keys(self) -> None:
        from ..runner.runner import RUNNER_KEYS

        known = (*RUNNER_KEYS, "runner_type", "model_wrapper_cfg", "custom_imports")
        for key in self.cfg.keys():
            if key not in known:
                close = closest_names(key, known, n=1)
                if close and close[0].lower() != key.lower() and _close_enough(key, close[0]):
                    self._report(
                        key,
                        f"the runner does not read '{key}'. Did you mean '{close[0]}'?",
                        warning=True,
                    )

    def _model(self) -> None:
        model = self.cfg.get("model")
        if model is None:
            self._report("model", "the config sets no model; the runner needs one")
            return
        for path, node in as_items(model, "model"):
            self.component(node, path, MODELS, nested=MODELS)
        preprocessor = self.cfg.get("data_preprocessor")
        # Without a type it is the model's: the runner hands it to the model, whose class
        # sets the default type (mmpretrain's ImageClassifier: ClsDataPreprocessor).
        if preprocessor is not None and not (
            isinstance(preprocessor, Mapping) and "type" not in preprocessor
        ):
            self.component(preprocessor, "data_preprocessor", MODELS)
        if self.cfg.get("model_wrapper_cfg") is not None:
            self.component(
                self.cfg.model_wrapper_cfg, "model_wrapper_cfg", MODEL_WRAPPERS, provided=["module"]
            )

    def dataloader(self, node: Any, path: str) -> None:
        """A dataloader config: its options, dataset, samplers and functions."""
        if not isinstance(node, Mapping):
            return
        from torch.utils.data import DataLoader

        options = [*inspect.signature(DataLoader.__init__).parameters, *_DATALOADER_KEYS]
        for key in node:
            if key not in options or key == "self":
                self._report(
                    join(path, key),
                    f"not a dataloader option.{did_you_mean(key, options)}",
                )
        nested = ("dataset", "sampler", "batch_sampler", "collate_fn", "worker_init_fn")
        self.check_values(DataLoader, {k: v for k, v in node.items() if k not in nested}, path)
        if "dataset" not in node:
            self._report(path, "needs a 'dataset'")
        else:
            self.dataset(node["dataset"], join(path, "dataset"))
        if node.get("sampler") is not None:
            self.component(
                node["sampler"], join(path, "sampler"), DATA_SAMPLERS,
                provided=["dataset", "data_source", "seed"],
            )  # fmt: skip
        if node.get("batch_sampler") is not None:
            self.component(
                node["batch_sampler"], join(path, "batch_sampler"), DATA_SAMPLERS,
                provided=["sampler", "batch_size", "drop_last"],
            )  # fmt: skip
        for key in ("collate_fn", "worker_init_fn"):
            if node.get(key) is not None:
                self.function(node[key], join(path, key))

    def dataset(self, node: Any, path: str) -> None:
        """A dataset, its wrapped datasets and its pipeline of transforms."""
        if self.component(node, path, DATASETS) is None:
            return
        if isinstance(node.get("dataset"), Mapping):
            self.dataset(node["dataset"], join(path, "dataset"))
        if isinstance(node.get("datasets"), (list, tuple)):
            for key, item in as_items(node["datasets"], join(path, "datasets")):
                self.dataset(item, key)
        pipeline = node.get("pipeline")
        if isinstance(pipeline, (list, tuple)):
            for key, item in as_items(pipeline, join(path, "pipeline")):
                self.component(item, key, TRANSFORMS, nested=TRANSFORMS)

    def evaluator(self, node: Any, path: str) -> None:
        """``dict(metrics=...)``/an ``EVALUATOR`` type, one metric, or a list of metrics."""
        if isinstance(node, Mapping):
            name = node.get("type")
            is_evaluator = isinstance(name, str) and name in EVALUATOR and name not in METRICS
            if "metrics" in node or is_evaluator:
                self.component(node, path, EVALUATOR, default_type="Evaluator")
                for key, item in as_items(node.get("metrics"), join(path, "metrics")):
                    self.component(item, key, METRICS)
                return
        for key, item in as_items(node, path):
            self.component(item, key, METRICS)

    def _loops(self) -> None:
        train = self.cfg.get("train_cfg")
        if isinstance(train, Mapping):
            by_epoch = train.get("by_epoch")
            if by_epoch is None:
                by_epoch = "max_iters" not in train
            default = "EpochBasedTrainLoop" if by_epoch else "IterBasedTrainLoop"
            self.component(
                train, "train_cfg", LOOPS, default_type=default,
                provided=["runner", "dataloader"], skip=["by_epoch", "resume_policy"],
            )  # fmt: skip
        for mode, default in (("val", "ValLoop"), ("test", "TestLoop")):
            node = self.cfg.get(f"{mode}_cfg")
            if isinstance(node, Mapping):
                self.component(
                    node, f"{mode}_cfg", LOOPS, default_type=default,
                    provided=["runner", "dataloader", "evaluator"],
                )  # fmt: skip

    def optim_wrapper(self, node: Any, path: str) -> None:
        """One optimizer wrapper (and its optimizer), or one per sub-model."""
        if not isinstance(node, Mapping):
            return
        if not any(key in node for key in ("type", "optimizer", "constructor")):
            for name, sub in node.items():
                self.optim_wrapper(sub, join(path, name))
            return
        constructor = node.get("constructor")
        if constructor is not None:
            self.component(
                {"type": constructor}, join(path, "constructor"), OPTIM_WRAPPER_CONSTRUCTORS
            )
            return  # a custom constructor may read any keys
        self.component(
            node, path, OPTIM_WRAPPERS, default_type="OptimWrapper",
            provided=["optimizer"], skip=["optimizer", "paramwise_cfg", *GUARD_KEYS],
        )  # fmt: skip
        optimizer = node.get("optimizer")
        if optimizer is None:
            self._report(path, "needs an 'optimizer', e.g. optimizer=dict(type='SGD', lr=0.01)")
            return
        opt_path = join(path, "optimizer")
        target = self.resolve(optimizer, opt_path, OPTIMIZERS)
        if target is not None:
            self.checked += 1
            args = {k: v for k, v in optimizer.items() if k not in NOT_ARGUMENTS}
            before = len(self.problems)
            self.check_args(target, args, opt_path, provided=_first_parameter(target))
            if len(self.problems) == before:
                self._scheduler_stand_ins = _stand_in_optimizer(target, args)

    def schedulers(self, node: Any, path: str) -> None:
        """``param_scheduler``: one config, a list, or a dict of them per optimizer."""
        if isinstance(node, Mapping) and "type" not in node:
            for name, sub in node.items():
                self.schedulers(sub, join(path, name))
            return
        for key, item in as_items(node, path):
            self.component(
                item, key, PARAM_SCHEDULERS, provided=["optimizer"],
                skip=["convert_to_iter_based", "epoch_length"],
                stand_ins=self._scheduler_stand_ins,
            )  # fmt: skip

    def _hooks(self) -> None:
        defaults = self.cfg.get("default_hooks")
        if isinstance(defaults, Mapping):
            for name, hook in defaults.items():
                if hook is not None:
                    self.component(hook, f"default_hooks.{name}", HOOKS, skip=["priority"])
        custom = self.cfg.get("custom_hooks")
        if custom is not None:
            for key, hook in as_items(custom, "custom_hooks"):
                target = self.component(hook, key, HOOKS, skip=["priority"])
                if target is not None:
                    self._forwarded(target, hook, key)

    def _forwarded(self, target: Any, node: Mapping[str, Any], path: str) -> None:
        """Check the ``**kwargs`` a component passes on to another one it builds (see
        :data:`FORWARDED_KWARGS`) against that one's constructor."""
        rule = FORWARDED_KWARGS.get(getattr(target, "__name__", ""))
        if rule is None:
            return
        type_key, default, registry, provided = rule
        own = inspect.signature(target).parameters
        extra = {k: v for k, v in node.items() if k not in own and k not in (*NOT_ARGUMENTS,
                 "priority")}  # fmt: skip
        inner = self.resolve({"type": node.get(type_key, default)}, join(path, type_key), registry)
        if inner is not None:
            self.check_args(inner, extra, path, provided=provided, partial=True)

    def _runtime_parts(self) -> None:
        cfg = self.cfg
        visualizer = cfg.get("visualizer")
        if isinstance(visualizer, Mapping):
            self.component(
                visualizer, "visualizer", VISUALIZERS, default_type="Visualizer",
                provided=["name", "save_dir"], skip=["vis_backends"],
            )  # fmt: skip
            backends = visualizer.get("vis_backends")
            if backends is not None:
                for key, item in as_items(backends, "visualizer.vis_backends"):
                    self.component(item, key, VISBACKENDS, provided=["save_dir"])
        if isinstance(cfg.get("log_processor"), Mapping):
            self.component(
                cfg.log_processor, "log_processor", LOG_PROCESSORS, default_type="LogProcessor"
            )
        strategy = cfg.get("strategy")
        if isinstance(strategy, Mapping):
            from ..strategies.base import default_strategy_type  # torch: only when needed

            default = default_strategy_type(cfg.get("launcher") or "none")
            self.component(strategy, "strategy", STRATEGIES, default_type=default)


#: Components whose ``**kwargs`` go to another component they build: class name ->
#: (key naming its type, default type, registry, arguments the component passes itself).
FORWARDED_KWARGS: dict[str, tuple[str, str, Any, list[str]]] = {
    "EMAHook": ("ema_type", "ExponentialMovingAverage", MODELS, ["model"]),
}


def _stand_in_optimizer(target: Any, args: dict[str, Any]) -> dict[str, Any] | None:
    """``{'optimizer': target(stand-in parameter, **args)}``, or ``None`` when it cannot be
    built (then the schedulers are built over the declared stand-in)."""
    from ..optim.optimizer.torch_registry import stand_in_parameters

    try:
        return {"optimizer": target(**stand_in_parameters(), **args)}
    except Exception:  # noqa: BLE001 - not a torch-style optimizer: use the default stand-in
        return None


def _first_parameter(target: Any) -> list[str]:
    try:
        params = list(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return []
    return params[:1]


def _close_enough(key: str, candidate: str) -> bool:
    import difflib

    return difflib.SequenceMatcher(None, key, candidate).ratio() >= 0.85


def check_config(cfg: Config) -> ConfigChecker:
    """Run a :class:`ConfigChecker` over ``cfg`` and return it (problems, count)."""
    checker = ConfigChecker(cfg)
    checker.run()
    return checker
