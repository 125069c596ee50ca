"""Registries: string-keyed builders for every configurable part of cadence."""

from ..utils.imports import import_object
from .build_functions import build_from_cfg, config_location, located_copy
from .default_scope import DefaultScope, default_scope, get_default_scope, set_default_scope
from .errors import BuildError, RegistryError
from .isolation import isolated_registries
from .registry import Registry
from .root import (
    DATA_SAMPLERS,
    DATASETS,
    EVALUATOR,
    FUNCTIONS,
    HOOKS,
    INFERENCERS,
    LOG_PROCESSORS,
    LOOPS,
    METRICS,
    MODEL_WRAPPERS,
    MODELS,
    OPTIM_WRAPPER_CONSTRUCTORS,
    OPTIM_WRAPPERS,
    OPTIMIZERS,
    PARAM_SCHEDULERS,
    ROOT_REGISTRIES,
    RUNNER_CONSTRUCTORS,
    RUNNERS,
    STRATEGIES,
    TASK_UTILS,
    TRANSFORMS,
    VISBACKENDS,
    VISUALIZERS,
    WEIGHT_INITIALIZERS,
    build_model_from_cfg,
    build_runner_from_cfg,
    build_scheduler_from_cfg,
)
from .utils import count_registered_modules, init_default_scope, traverse_registry_tree

__all__ = [
    "BuildError", "DATASETS", "DATA_SAMPLERS", "DefaultScope", "EVALUATOR", "FUNCTIONS",
    "HOOKS", "INFERENCERS", "LOG_PROCESSORS", "LOOPS", "METRICS", "MODELS", "MODEL_WRAPPERS",
    "OPTIMIZERS", "OPTIM_WRAPPERS", "OPTIM_WRAPPER_CONSTRUCTORS", "PARAM_SCHEDULERS",
    "ROOT_REGISTRIES", "RUNNERS", "RUNNER_CONSTRUCTORS", "Registry", "RegistryError",
    "STRATEGIES", "TASK_UTILS", "TRANSFORMS", "VISBACKENDS", "VISUALIZERS",
    "WEIGHT_INITIALIZERS", "build_from_cfg", "config_location", "default_scope",
    "get_default_scope", "import_object", "isolated_registries", "located_copy",
    "set_default_scope",
    "build_model_from_cfg", "build_runner_from_cfg", "build_scheduler_from_cfg",
    "count_registered_modules", "init_default_scope", "traverse_registry_tree",
]  # fmt: skip
