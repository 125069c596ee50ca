"""Models: BaseModel, data preprocessors, weight initialisation, plain-module adapter, helpers."""

from .adapter import as_cadence_model
from .averaged_model import (
    BaseAveragedModel,
    ExponentialMovingAverage,
    MomentumAnnealingEMA,
    StochasticWeightAverage,
)
from .base_model import BaseModel, build_data_preprocessor, parse_losses
from .base_module import BaseModule, ModuleDict, ModuleList, Sequential
from .data_preprocessor import BaseDataPreprocessor, ImgDataPreprocessor
from .init_functions import (
    caffe2_xavier_init,
    constant_init,
    kaiming_init,
    normal_init,
    trunc_normal_init,
    uniform_init,
    xavier_init,
)
from .test_time_aug import BaseTTAModel
from .utils import (
    convert_sync_batchnorm,
    detect_anomalous_params,
    merge_dict,
    revert_sync_batchnorm,
    stack_batch,
)
from .weight_init import (
    BaseInit,
    Caffe2XavierInit,
    ConstantInit,
    KaimingInit,
    NormalInit,
    PretrainedInit,
    TruncNormalInit,
    UniformInit,
    XavierInit,
    bias_init_with_prob,
    initialize,
)
from .wrappers import is_model_wrapper

__all__ = [
    "BaseAveragedModel", "ExponentialMovingAverage", "MomentumAnnealingEMA",
    "StochasticWeightAverage",
    "BaseDataPreprocessor", "BaseInit", "BaseModel", "BaseModule", "Caffe2XavierInit",
    "ConstantInit", "ImgDataPreprocessor", "KaimingInit", "NormalInit", "PretrainedInit",
    "TruncNormalInit", "UniformInit", "XavierInit", "as_cadence_model", "bias_init_with_prob",
    "build_data_preprocessor", "initialize", "parse_losses", "stack_batch",
    "ModuleDict", "ModuleList", "Sequential", "convert_sync_batchnorm", "detect_anomalous_params",
    "is_model_wrapper", "merge_dict", "revert_sync_batchnorm",
    "BaseTTAModel",
    "caffe2_xavier_init", "constant_init", "kaiming_init", "normal_init", "trunc_normal_init",
    "uniform_init", "xavier_init",
]  # fmt: skip
