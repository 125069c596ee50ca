"""Models: BaseModel, data preprocessors, weight initialisation, plain-module adapter, helpers."""

from __future__ import annotations

from ..utils.lazy import lazy_exports

#: name -> the module that defines it, imported when the name is first read.
LAZY_EXPORTS: dict[str, str] = {
    "as_cadence_model": ".adapter",
    "BaseAveragedModel": ".averaged_model",
    "ExponentialMovingAverage": ".averaged_model",
    "MomentumAnnealingEMA": ".averaged_model",
    "StochasticWeightAverage": ".averaged_model",
    "BaseModel": ".base_model",
    "build_data_preprocessor": ".base_model",
    "parse_losses": ".base_model",
    "BaseModule": ".base_module",
    "ModuleDict": ".base_module",
    "ModuleList": ".base_module",
    "Sequential": ".base_module",
    "BaseDataPreprocessor": ".data_preprocessor",
    "ImgDataPreprocessor": ".data_preprocessor",
    "BaseTTAModel": ".test_time_aug",
    "convert_sync_batchnorm": ".utils",
    "detect_anomalous_params": ".utils",
    "merge_dict": ".utils",
    "revert_sync_batchnorm": ".utils",
    "stack_batch": ".utils",
    "BaseInit": ".weight_init",
    "Caffe2XavierInit": ".weight_init",
    "ConstantInit": ".weight_init",
    "KaimingInit": ".weight_init",
    "NormalInit": ".weight_init",
    "PretrainedInit": ".weight_init",
    "TruncNormalInit": ".weight_init",
    "UniformInit": ".weight_init",
    "XavierInit": ".weight_init",
    "bias_init_with_prob": ".weight_init",
    "initialize": ".weight_init",
    "is_model_wrapper": ".wrappers",
    "MMDistributedDataParallel": ".wrappers.distributed",
    "MMSeparateDistributedDataParallel": ".wrappers.separate_distributed",
    "caffe2_xavier_init": ".init_functions",
    "constant_init": ".init_functions",
    "kaiming_init": ".init_functions",
    "normal_init": ".init_functions",
    "trunc_normal_init": ".init_functions",
    "uniform_init": ".init_functions",
    "xavier_init": ".init_functions",
}

__all__ = [
    "BaseAveragedModel", "ExponentialMovingAverage", "MomentumAnnealingEMA",
    "StochasticWeightAverage",
    "BaseDataPreprocessor", "BaseInit", "BaseModel", "BaseModule", "Caffe2XavierInit",
    "ConstantInit", "ImgDataPreprocessor", "KaimingInit", "NormalInit", "PretrainedInit",
    "TruncNormalInit", "UniformInit", "XavierInit", "as_cadence_model", "bias_init_with_prob",
    "build_data_preprocessor", "initialize", "parse_losses", "stack_batch",
    "ModuleDict", "ModuleList", "Sequential", "convert_sync_batchnorm", "detect_anomalous_params",
    "is_model_wrapper", "merge_dict", "revert_sync_batchnorm",
    "BaseTTAModel", "MMDistributedDataParallel", "MMSeparateDistributedDataParallel",
    "caffe2_xavier_init", "constant_init", "kaiming_init", "normal_init", "trunc_normal_init",
    "uniform_init", "xavier_init",
]  # fmt: skip
__getattr__, __dir__ = lazy_exports(__name__, LAZY_EXPORTS)
