"""The root registries of cadence.

Each root registry names the cadence modules that register its built-in objects
(``locations``); those modules are imported on the first lookup, so importing
this file stays cheap. Downstream packages create children of these roots.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from ..contracts import RunnerClass
from .build_functions import as_config_mapping, build_from_cfg, is_config
from .errors import RegistryArgumentError
from .registry import Registry


def _root(name: str, *locations: str, build_func: Any = None) -> Registry:
    return Registry(name, scope="cadence", locations=list(locations), build_func=build_func)


def build_model_from_cfg(
    cfg: Any, registry: Registry, default_args: Any = None, key_path: str | None = None
) -> Any:
    """Build a model; a list of configs becomes an ``nn.Sequential`` of them."""
    if isinstance(cfg, (list, tuple)):
        from torch import nn

        return nn.Sequential(
            *(
                build_from_cfg(c, registry, default_args, f"{key_path or 'model'}.{i}")
                for i, c in enumerate(cfg)
            )
        )
    return build_from_cfg(cfg, registry, default_args, key_path)


def build_runner_from_cfg(
    cfg: Any, registry: Registry, default_args: Any = None, key_path: str | None = None
) -> Any:
    """Build a runner with its class's ``from_cfg``; the config's ``runner_type`` (a
    registered name or a class, default ``'Runner'``) picks the class, ``_scope_`` the
    scope. A :class:`~cadence.config.Config` is passed on as it is (its file name names
    the experiment)."""
    if default_args is not None:
        raise TypeError("a runner is built from its config alone; default_args is not accepted")
    if is_config(cfg):
        args: Any = copy.deepcopy(cfg) if "_scope_" in cfg else cfg
    elif isinstance(cfg, Mapping):
        args = dict(cfg)
    else:
        raise RegistryArgumentError(
            f"a runner config must be a dict or Config, got {type(cfg).__name__}"
        )
    scope = args.get("_scope_")
    if "_scope_" in args:
        del args["_scope_"]
    with registry.switch_scope_and_registry(scope) as active:
        runner_type = args.get("runner_type", "Runner")
        if isinstance(runner_type, str):
            runner_cls = active.lookup(runner_type, key_path="runner_type")
        elif isinstance(runner_type, type):
            runner_cls = runner_type
        else:
            raise TypeError(
                f"runner_type must be a registered runner name or a class, got "
                f"{type(runner_type).__name__} {runner_type!r}"
            )
        if not isinstance(runner_cls, RunnerClass):
            raise TypeError(f"runner_type {runner_cls!r} has no from_cfg(cfg) to build it with")
        return runner_cls.from_cfg(args)


# The parameter-scheduler builder lives in cadence.optim, which imports the registries;
# the registry layer must not import it back. cadence.optim hands it down on import.
_scheduler_build_func: Callable[..., Any] | None = None


def set_scheduler_build_func(func: Callable[..., Any]) -> None:
    """Install the build function of ``PARAM_SCHEDULERS`` (``cadence.optim`` does, on import)."""
    global _scheduler_build_func
    _scheduler_build_func = func


def build_scheduler_from_cfg(
    cfg: Any, registry: Registry, default_args: Any = None, key_path: str | None = None
) -> Any:
    """Build a parameter scheduler (``convert_to_iter_based`` needs ``epoch_length``).

    Delegates to the builder ``cadence.optim`` installs; the first call imports the
    registry's locations (``cadence.optim``) like any lookup does, which installs it.
    """
    cfg = as_config_mapping(cfg)
    if _scheduler_build_func is None:
        PARAM_SCHEDULERS.import_from_location()
    if _scheduler_build_func is None:  # cadence.optim failed to import: lookups say why
        return build_from_cfg(cfg, registry, default_args, key_path)
    return _scheduler_build_func(
        cfg, registry=registry, default_args=default_args, key_path=key_path
    )


RUNNERS = _root("runner", "cadence.runner", build_func=build_runner_from_cfg)
RUNNER_CONSTRUCTORS = _root("runner constructor", "cadence.runner")
LOOPS = _root("loop", "cadence.loops")
HOOKS = _root("hook", "cadence.hooks")
STRATEGIES = _root("strategy", "cadence.strategies")

DATASETS = _root("dataset", "cadence.dataset")
DATA_SAMPLERS = _root("data sampler", "cadence.dataset")
TRANSFORMS = _root("transform", "cadence.transforms")
FUNCTIONS = _root("function", "cadence.dataset")

MODELS = _root("model", "cadence.model", build_func=build_model_from_cfg)
MODEL_WRAPPERS = _root("model_wrapper", "cadence.model")
WEIGHT_INITIALIZERS = _root("weight initializer", "cadence.model")

OPTIMIZERS = _root("optimizer", "cadence.optim")
OPTIM_WRAPPERS = _root("optim_wrapper", "cadence.optim")
OPTIM_WRAPPER_CONSTRUCTORS = _root("optimizer wrapper constructor", "cadence.optim")
PARAM_SCHEDULERS = _root(
    "parameter scheduler", "cadence.optim", build_func=build_scheduler_from_cfg
)

METRICS = _root("metric", "cadence.evaluator")
EVALUATOR = _root("evaluator", "cadence.evaluator")
TASK_UTILS = _root("task util")
INFERENCERS = _root("inferencer")

VISUALIZERS = _root("visualizer", "cadence.visualization")
VISBACKENDS = _root("vis_backend", "cadence.visualization")
LOG_PROCESSORS = _root("log_processor", "cadence.hooks.log_processor")

ROOT_REGISTRIES: tuple[Registry, ...] = (
    RUNNERS, RUNNER_CONSTRUCTORS, LOOPS, HOOKS, STRATEGIES,
    DATASETS, DATA_SAMPLERS, TRANSFORMS, FUNCTIONS,
    MODELS, MODEL_WRAPPERS, WEIGHT_INITIALIZERS,
    OPTIMIZERS, OPTIM_WRAPPERS, OPTIM_WRAPPER_CONSTRUCTORS, PARAM_SCHEDULERS,
    METRICS, EVALUATOR, TASK_UTILS, INFERENCERS,
    VISUALIZERS, VISBACKENDS, LOG_PROCESSORS,
)  # fmt: skip
