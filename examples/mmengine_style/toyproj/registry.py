# Copyright (c) toyproj authors. All rights reserved.
"""toyproj provides 5 registry nodes to support using modules across projects.

Each node is a child of the root registry in cadence.
More details can be found at
https://mmengine.readthedocs.io/en/latest/advanced_tutorials/registry.html.
"""
from cadence.registry import DATASETS as MMENGINE_DATASETS
from cadence.registry import HOOKS as MMENGINE_HOOKS
from cadence.registry import METRICS as MMENGINE_METRICS
from cadence.registry import MODELS as MMENGINE_MODELS
from cadence.registry import TRANSFORMS as MMENGINE_TRANSFORMS
from cadence.registry import Registry

# manage data-related modules
DATASETS = Registry(
    'dataset', parent=MMENGINE_DATASETS, locations=['toyproj.datasets'])
TRANSFORMS = Registry(
    'transform',
    parent=MMENGINE_TRANSFORMS,
    locations=['toyproj.datasets.transforms'])

# manage all kinds of modules inheriting `nn.Module`
MODELS = Registry('model', parent=MMENGINE_MODELS, locations=['toyproj.models'])

# manage all kinds of metrics
METRICS = Registry(
    'metric', parent=MMENGINE_METRICS, locations=['toyproj.evaluation'])

# manage all kinds of hooks like `CheckpointHook`
HOOKS = Registry('hook', parent=MMENGINE_HOOKS, locations=['toyproj.engine'])
