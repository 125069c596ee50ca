"""The root registries of cadence.

Each root registry names the cadence modules that register its built-in objects
(``locations``); those modules are imported on the first lookup, so importing
this file stays cheap. Downstream packages create children of these roots.
"""

from __future__ import annotations

from .registry import Registry


def _root(name: str, *locations: str) -> Registry:
    return Registry(name, scope="cadence", locations=list(locations))


RUNNERS = _root("runner", "cadence.runner")
RUNNER_CONSTRUCTORS = _root("runner constructor", "cadence.runner")
LOOPS = _root("loop", "cadence.loops")
HOOKS = _root("hook", "cadence.hooks")
STRATEGIES = _root("strategy", "cadence.strategies")

DATASETS = _root("dataset", "cadence.dataset")
DATA_SAMPLERS = _root("data sampler", "cadence.dataset")
TRANSFORMS = _root("transform", "cadence.dataset")
FUNCTIONS = _root("function", "cadence.dataset")

MODELS = _root("model", "cadence.model")
MODEL_WRAPPERS = _root("model_wrapper", "cadence.model")
WEIGHT_INITIALIZERS = _root("weight initializer", "cadence.model")

OPTIMIZERS = _root("optimizer", "cadence.optim")
OPTIM_WRAPPERS = _root("optim_wrapper", "cadence.optim")
OPTIM_WRAPPER_CONSTRUCTORS = _root("optimizer wrapper constructor", "cadence.optim")
PARAM_SCHEDULERS = _root("parameter scheduler", "cadence.optim")

METRICS = _root("metric", "cadence.evaluator")
EVALUATOR = _root("evaluator", "cadence.evaluator")
TASK_UTILS = _root("task util")
INFERENCERS = _root("inferencer")

VISUALIZERS = _root("visualizer", "cadence.visualization")
VISBACKENDS = _root("vis_backend", "cadence.visualization")
LOG_PROCESSORS = _root("log_processor", "cadence.logging")

ROOT_REGISTRIES: tuple[Registry, ...] = (
    RUNNERS, RUNNER_CONSTRUCTORS, LOOPS, HOOKS, STRATEGIES,
    DATASETS, DATA_SAMPLERS, TRANSFORMS, FUNCTIONS,
    MODELS, MODEL_WRAPPERS, WEIGHT_INITIALIZERS,
    OPTIMIZERS, OPTIM_WRAPPERS, OPTIM_WRAPPER_CONSTRUCTORS, PARAM_SCHEDULERS,
    METRICS, EVALUATOR, TASK_UTILS, INFERENCERS,
    VISUALIZERS, VISBACKENDS, LOG_PROCESSORS,
)  # fmt: skip
