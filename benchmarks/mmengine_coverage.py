"""Which of mmengine v0.10.7's public names cadence provides, module by module.

``MMENGINE_NAMES`` lists, for each public module of mmengine v0.10.7, the names
its ``__all__`` exports (for the three modules without one, ``model.utils``,
``model.weight_init``, ``model.efficient_conv_bn_eval``, and for
``visualization.utils``: the public functions and classes defined there). The
top-level ``mmengine`` namespace is what its ``__init__`` star-imports from
``config``, ``fileio``, ``logging``, ``registry`` and ``utils``, plus
``__version__`` and ``version_info``. These lists are facts about mmengine,
read from its v0.10.7 wheel; mmengine itself is not needed to run this script.

For each module the script imports cadence's counterpart (``COUNTERPARTS``)
and reports which names exist there under the same name. A name that cadence
has under another name or path counts as missing here; the page
docs/mmengine_module_status.md says where it went. The page's counts are
checked against this script by tests/docs/test_module_status_page.py.

    python benchmarks/mmengine_coverage.py            # the table of counts
    python benchmarks/mmengine_coverage.py --missing  # also the missing names
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MMENGINE_VERSION = "0.10.7"

# mmengine/__init__.py star-imports these packages, and adds `__version__` and `version_info`.
TOP_LEVEL_SOURCES = (
    "mmengine.config",
    "mmengine.fileio",
    "mmengine.logging",
    "mmengine.registry",
    "mmengine.utils",
)

# fmt: off
MMENGINE_NAMES: dict[str, tuple[str, ...]] = {
    "mmengine._strategy": (
        "BaseStrategy", "DDPStrategy", "SingleDeviceStrategy", "DeepSpeedStrategy",
        "ColossalAIStrategy", "FSDPStrategy",
    ),
    "mmengine.analysis": (
        "FlopAnalyzer", "ActivationAnalyzer", "flop_count", "activation_count",
        "parameter_count", "parameter_count_table", "get_model_complexity_info",
    ),
    "mmengine.config": (
        "Config", "ConfigDict", "DictAction", "read_base",
    ),
    "mmengine.dataset": (
        "BaseDataset", "Compose", "force_full_init", "ClassBalancedDataset", "ConcatDataset",
        "RepeatDataset", "DefaultSampler", "InfiniteSampler", "worker_init_fn",
        "pseudo_collate", "COLLATE_FUNCTIONS", "default_collate",
    ),
    "mmengine.device": (
        "get_max_cuda_memory", "get_device", "is_cuda_available", "is_mlu_available",
        "is_mps_available", "is_npu_available", "is_dipu_available", "get_max_musa_memory",
        "is_musa_available", "is_npu_support_full_precision",
    ),
    "mmengine.dist": (
        "all_gather_object", "all_reduce", "all_gather", "all_reduce_dict", "collect_results",
        "collect_results_cpu", "collect_results_gpu", "gather", "broadcast", "gather_object",
        "sync_random_seed", "broadcast_object_list", "get_dist_info", "init_dist",
        "init_local_group", "get_backend", "get_world_size", "get_rank", "get_local_size",
        "get_local_group", "get_local_rank", "is_main_process", "master_only", "barrier",
        "is_distributed", "get_default_group", "all_reduce_params", "get_data_device",
        "get_comm_device", "cast_data_device", "infer_launcher",
    ),
    "mmengine.evaluator": (
        "BaseMetric", "Evaluator", "get_metric_value", "DumpResults",
    ),
    "mmengine.fileio": (
        "BaseStorageBackend", "FileClient", "PetrelBackend", "MemcachedBackend", "LmdbBackend",
        "HardDiskBackend", "LocalBackend", "HTTPBackend", "copy_if_symlink_fails", "copyfile",
        "copyfile_from_local", "copyfile_to_local", "copytree", "copytree_from_local",
        "copytree_to_local", "exists", "generate_presigned_url", "get", "get_file_backend",
        "get_local_path", "get_text", "isdir", "isfile", "join_path", "list_dir_or_file", "put",
        "put_text", "remove", "rmtree", "load", "dump", "register_handler", "BaseFileHandler",
        "JsonHandler", "PickleHandler", "YamlHandler", "list_from_file", "dict_from_file",
        "register_backend",
    ),
    "mmengine.fileio.backends": (
        "BaseStorageBackend", "LocalBackend", "HTTPBackend", "LmdbBackend", "MemcachedBackend",
        "PetrelBackend", "register_backend", "backends", "prefix_to_backends",
    ),
    "mmengine.fileio.handlers": (
        "BaseFileHandler", "JsonHandler", "PickleHandler", "YamlHandler", "register_handler",
        "file_handlers",
    ),
    "mmengine.hooks": (
        "Hook", "IterTimerHook", "DistSamplerSeedHook", "ParamSchedulerHook", "SyncBuffersHook",
        "EmptyCacheHook", "CheckpointHook", "LoggerHook", "NaiveVisualizationHook", "EMAHook",
        "RuntimeInfoHook", "ProfilerHook", "PrepareTTAHook", "NPUProfilerHook",
        "EarlyStoppingHook",
    ),
    "mmengine.hub": (
        "get_config", "get_model",
    ),
    "mmengine.infer": (
        "BaseInferencer",
    ),
    "mmengine.logging": (
        "HistoryBuffer", "MessageHub", "MMLogger", "print_log",
    ),
    "mmengine.model": (
        "MMDistributedDataParallel", "is_model_wrapper", "BaseAveragedModel",
        "StochasticWeightAverage", "ExponentialMovingAverage", "MomentumAnnealingEMA",
        "BaseModel", "BaseDataPreprocessor", "ImgDataPreprocessor",
        "MMSeparateDistributedDataParallel", "BaseModule", "stack_batch", "merge_dict",
        "detect_anomalous_params", "ModuleList", "ModuleDict", "Sequential",
        "revert_sync_batchnorm", "update_init_info", "constant_init", "xavier_init",
        "normal_init", "trunc_normal_init", "uniform_init", "kaiming_init",
        "caffe2_xavier_init", "bias_init_with_prob", "BaseInit", "ConstantInit", "XavierInit",
        "NormalInit", "TruncNormalInit", "UniformInit", "KaimingInit", "Caffe2XavierInit",
        "PretrainedInit", "initialize", "convert_sync_batchnorm", "BaseTTAModel",
        "MMFullyShardedDataParallel",
    ),
    "mmengine.model.base_model": (
        "BaseModel", "ImgDataPreprocessor", "BaseDataPreprocessor",
    ),
    "mmengine.model.efficient_conv_bn_eval": (
        "efficient_conv_bn_eval_forward", "efficient_conv_bn_eval_control",
        "efficient_conv_bn_eval_graph_transform",
        "turn_on_efficient_conv_bn_eval_for_single_model", "turn_on_efficient_conv_bn_eval",
    ),
    "mmengine.model.utils": (
        "stack_batch", "detect_anomalous_params", "merge_dict", "revert_sync_batchnorm",
        "convert_sync_batchnorm",
    ),
    "mmengine.model.weight_init": (
        "update_init_info", "constant_init", "xavier_init", "normal_init", "trunc_normal_init",
        "uniform_init", "kaiming_init", "caffe2_xavier_init", "bias_init_with_prob", "BaseInit",
        "ConstantInit", "XavierInit", "NormalInit", "TruncNormalInit", "UniformInit",
        "KaimingInit", "Caffe2XavierInit", "PretrainedInit", "initialize", "trunc_normal_",
    ),
    "mmengine.model.wrappers": (
        "MMDistributedDataParallel", "is_model_wrapper", "MMSeparateDistributedDataParallel",
        "MMFullyShardedDataParallel",
    ),
    "mmengine.optim": (
        "OPTIM_WRAPPER_CONSTRUCTORS", "OPTIMIZERS", "build_optim_wrapper",
        "DefaultOptimWrapperConstructor", "ConstantLR", "CosineAnnealingLR", "ExponentialLR",
        "LinearLR", "MultiStepLR", "StepLR", "ConstantMomentum", "CosineAnnealingMomentum",
        "ExponentialMomentum", "LinearMomentum", "MultiStepMomentum", "StepMomentum",
        "ConstantParamScheduler", "CosineAnnealingParamScheduler", "ExponentialParamScheduler",
        "LinearParamScheduler", "MultiStepParamScheduler", "StepParamScheduler",
        "_ParamScheduler", "OptimWrapper", "AmpOptimWrapper", "ApexOptimWrapper",
        "OptimWrapperDict", "OneCycleParamScheduler", "OneCycleLR", "PolyLR", "PolyMomentum",
        "PolyParamScheduler", "ReduceOnPlateauLR", "ReduceOnPlateauMomentum",
        "ReduceOnPlateauParamScheduler", "ZeroRedundancyOptimizer", "BaseOptimWrapper",
    ),
    "mmengine.optim.optimizer": (
        "OPTIM_WRAPPER_CONSTRUCTORS", "OPTIMIZERS", "DefaultOptimWrapperConstructor",
        "build_optim_wrapper", "OptimWrapper", "AmpOptimWrapper", "ApexOptimWrapper",
        "OptimWrapperDict", "ZeroRedundancyOptimizer", "BaseOptimWrapper",
    ),
    "mmengine.optim.scheduler": (
        "ConstantLR", "CosineAnnealingLR", "ExponentialLR", "LinearLR", "MultiStepLR", "StepLR",
        "ConstantMomentum", "CosineAnnealingMomentum", "ExponentialMomentum", "LinearMomentum",
        "MultiStepMomentum", "StepMomentum", "ConstantParamScheduler",
        "CosineAnnealingParamScheduler", "ExponentialParamScheduler", "LinearParamScheduler",
        "MultiStepParamScheduler", "StepParamScheduler", "_ParamScheduler",
        "PolyParamScheduler", "PolyLR", "PolyMomentum", "OneCycleParamScheduler", "OneCycleLR",
        "CosineRestartParamScheduler", "CosineRestartLR", "CosineRestartMomentum",
        "ReduceOnPlateauParamScheduler", "ReduceOnPlateauLR", "ReduceOnPlateauMomentum",
    ),
    "mmengine.registry": (
        "Registry", "RUNNERS", "RUNNER_CONSTRUCTORS", "HOOKS", "DATASETS", "DATA_SAMPLERS",
        "TRANSFORMS", "MODELS", "WEIGHT_INITIALIZERS", "OPTIMIZERS",
        "OPTIM_WRAPPER_CONSTRUCTORS", "TASK_UTILS", "PARAM_SCHEDULERS", "METRICS",
        "MODEL_WRAPPERS", "OPTIM_WRAPPERS", "LOOPS", "VISBACKENDS", "VISUALIZERS",
        "LOG_PROCESSORS", "EVALUATOR", "INFERENCERS", "DefaultScope", "traverse_registry_tree",
        "count_registered_modules", "build_model_from_cfg", "build_runner_from_cfg",
        "build_from_cfg", "build_scheduler_from_cfg", "init_default_scope", "FUNCTIONS",
        "STRATEGIES",
    ),
    "mmengine.runner": (
        "BaseLoop", "load_state_dict", "get_torchvision_models", "get_external_models",
        "get_mmcls_models", "get_deprecated_model_names", "CheckpointLoader", "load_checkpoint",
        "weights_to_cpu", "get_state_dict", "save_checkpoint", "EpochBasedTrainLoop",
        "IterBasedTrainLoop", "ValLoop", "TestLoop", "Runner", "get_priority", "Priority",
        "find_latest_checkpoint", "autocast", "LogProcessor", "set_random_seed",
        "FlexibleRunner", "turn_on_activation_checkpointing",
    ),
    "mmengine.structures": (
        "BaseDataElement", "InstanceData", "LabelData", "PixelData",
    ),
    "mmengine.testing": (
        "assert_allclose", "assert_dict_contains_subset", "assert_keys_equal",
        "assert_attrs_equal", "assert_dict_has_keys", "assert_is_norm_layer",
        "assert_params_all_zeros", "check_python_script", "RunnerTestCase",
    ),
    "mmengine.testing._internal": (
        "MultiProcessTestCase",
    ),
    "mmengine.utils": (
        "is_str", "iter_cast", "list_cast", "tuple_cast", "is_seq_of", "is_list_of",
        "is_tuple_of", "slice_list", "concat_list", "check_prerequisites", "requires_package",
        "requires_executable", "is_filepath", "fopen", "check_file_exist", "mkdir_or_exist",
        "symlink", "scandir", "deprecated_api_warning", "import_modules_from_strings",
        "to_1tuple", "to_2tuple", "to_3tuple", "to_4tuple", "to_ntuple", "is_installed",
        "call_command", "get_installed_path", "install_package", "is_abs",
        "is_method_overridden", "has_method", "digit_version", "get_git_hash", "ManagerMeta",
        "ManagerMixin", "Timer", "check_time", "TimerError", "ProgressBar",
        "track_iter_progress", "track_parallel_progress", "track_progress",
        "deprecated_function", "apply_to", "track_progress_rich", "get_object_from_string",
    ),
    "mmengine.utils.dl_utils": (
        "load_url", "TORCH_VERSION", "set_multi_processing", "has_batch_norm", "is_norm",
        "tensor2imgs", "mmcv_full_available", "collect_env", "torch_meshgrid", "is_jit_tracing",
        "TimeCounter",
    ),
    "mmengine.visualization": (
        "Visualizer", "BaseVisBackend", "LocalVisBackend", "WandbVisBackend",
        "TensorboardVisBackend", "MLflowVisBackend", "ClearMLVisBackend", "NeptuneVisBackend",
        "DVCLiveVisBackend", "AimVisBackend",
    ),
    "mmengine.visualization.utils": (
        "tensor2ndarray", "value2list", "check_type", "check_length", "check_type_and_length",
        "color_val_matplotlib", "color_str2rgb", "convert_overlay_heatmap", "wait_continue",
        "img_from_canvas",
    ),
}
# fmt: on


def _top_level_names() -> tuple[str, ...]:
    names: list[str] = []
    for module in TOP_LEVEL_SOURCES:
        names.extend(name for name in MMENGINE_NAMES[module] if name not in names)
    return (*names, "__version__", "version_info")


MMENGINE_NAMES["mmengine"] = _top_level_names()

# mmengine module -> cadence module holding its names (None: cadence has no such module).
COUNTERPARTS: dict[str, str | None] = {
    "mmengine": "cadence",
    "mmengine._strategy": "cadence.strategies",
    "mmengine.analysis": "cadence.analysis",
    "mmengine.config": "cadence.config",
    "mmengine.dataset": "cadence.dataset",
    "mmengine.device": "cadence.device",
    "mmengine.dist": "cadence.dist",
    "mmengine.evaluator": "cadence.evaluator",
    "mmengine.fileio": "cadence.fileio",
    "mmengine.fileio.backends": "cadence.fileio.backends",
    "mmengine.fileio.handlers": "cadence.fileio.handlers",
    "mmengine.hooks": "cadence.hooks",
    "mmengine.hub": None,
    "mmengine.infer": "cadence.inference",
    "mmengine.logging": "cadence.logging",
    "mmengine.model": "cadence.model",
    "mmengine.model.base_model": "cadence.model.base_model",
    "mmengine.model.efficient_conv_bn_eval": None,
    "mmengine.model.utils": "cadence.model.utils",
    "mmengine.model.weight_init": "cadence.model.weight_init",
    "mmengine.model.wrappers": "cadence.model.wrappers",
    "mmengine.optim": "cadence.optim",
    "mmengine.optim.optimizer": "cadence.optim.optimizer",
    "mmengine.optim.scheduler": "cadence.optim.scheduler",
    "mmengine.registry": "cadence.registry",
    "mmengine.runner": "cadence.runner",
    "mmengine.structures": "cadence.structures",
    "mmengine.testing": "cadence.testing",
    "mmengine.testing._internal": "cadence.testing._internal",
    "mmengine.utils": "cadence.utils",
    "mmengine.utils.dl_utils": "cadence.utils.dl_utils",
    "mmengine.visualization": "cadence.visualization",
    "mmengine.visualization.utils": "cadence.visualization.utils",
}

# Other cadence modules that hold names of an mmengine module under a different path; they
# are searched for the names the counterpart lacks (the "elsewhere" count).
ELSEWHERE: dict[str, tuple[str, ...]] = {
    "mmengine": ("cadence.fileio", "cadence.registry"),
    "mmengine.dist": ("cadence.strategies",),
    "mmengine.fileio.backends": ("cadence.fileio",),
    "mmengine.model.base_model": ("cadence.model",),
    "mmengine.optim": ("cadence.registry",),
    "mmengine.optim.optimizer": ("cadence.registry",),
    "mmengine.runner": ("cadence.loops", "cadence.hooks", "cadence.strategies"),
}


@dataclass(frozen=True)
class ModuleCoverage:
    """mmengine's names of one module split into those cadence's counterpart has and lacks."""

    mmengine: str
    cadence: str | None
    provided: tuple[str, ...]
    elsewhere: tuple[tuple[str, str], ...]  # (name, the cadence module that has it)
    missing: tuple[str, ...]

    @property
    def total(self) -> int:
        """How many public names the mmengine module has."""
        return len(self.provided) + len(self.elsewhere) + len(self.missing)

    @property
    def count(self) -> str:
        """``provided/total``, as the docs page writes it."""
        return f"{len(self.provided)}/{self.total}"


def module_coverage(mmengine_module: str) -> ModuleCoverage:
    """Import the counterpart of ``mmengine_module`` and look up each of its names there."""
    names = MMENGINE_NAMES[mmengine_module]
    target = COUNTERPARTS[mmengine_module]
    # A declared counterpart must import: a failure here is a broken cadence module.
    provided = _found_in(target, names) if target else ()
    elsewhere: list[tuple[str, str]] = []
    for other in ELSEWHERE.get(mmengine_module, ()):
        done = {*provided, *(name for name, _ in elsewhere)}
        found = _found_in(other, [name for name in names if name not in done])
        elsewhere.extend((name, other) for name in found)
    placed = {*provided, *(name for name, _ in elsewhere)}
    missing = tuple(name for name in names if name not in placed)
    return ModuleCoverage(mmengine_module, target, provided, tuple(elsewhere), missing)


def _found_in(module_name: str, names: Sequence[str]) -> tuple[str, ...]:
    module = importlib.import_module(module_name)
    return tuple(name for name in names if hasattr(module, name))


def coverage() -> list[ModuleCoverage]:
    """The coverage of every mmengine module, in name order (``mmengine`` first)."""
    return [module_coverage(name) for name in sorted(MMENGINE_NAMES)]


def format_table(rows: list[ModuleCoverage], show_missing: bool = False) -> str:
    """A plain-text table: module, counterpart, same path (provided/total), elsewhere."""
    width = max(len(row.mmengine) for row in rows)
    lines = [
        f"{'mmengine module':<{width}}  {'cadence counterpart':<28} {'same path':>9} elsewhere"
    ]
    for row in rows:
        moved = len(row.elsewhere)
        line = f"{row.mmengine:<{width}}  {row.cadence or '-':<28} {row.count:>9} {moved:>9}"
        if show_missing and row.elsewhere:
            line += "  elsewhere: " + ", ".join(
                f"{name} ({where})" for name, where in row.elsewhere
            )
        if show_missing and row.missing:
            line += "  missing: " + ", ".join(row.missing)
        lines.append(line)
    provided = sum(len(row.provided) for row in rows)
    moved = sum(len(row.elsewhere) for row in rows)
    total = sum(row.total for row in rows)
    lines.append(f"{'all modules':<{width}}  {'':<28} {f'{provided}/{total}':>9} {moved:>9}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--missing", action="store_true", help="list the names cadence lacks")
    args = parser.parse_args(argv)
    print(f"mmengine v{MMENGINE_VERSION} public names that cadence provides at the same path")
    print(format_table(coverage(), show_missing=args.missing))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's cadence
    raise SystemExit(main())
