from mmengine.config import read_base
import torch
import torch.nn as nn
from torch.nn import Linear

with read_base():
    # Only some names are taken from these bases.
    from .._base_.models.resnet18_cifar import model
    from .._base_.datasets.cifar10_bs16 import *
    from .._base_.schedules.cifar10_bs128 import (optim_wrapper, train_cfg,
                                                  val_cfg, test_cfg)
    from .._base_.default_runtime import default_hooks as default_hooks
    from .._base_.default_runtime import env_cfg, log_level

# A projection neck made of plain torch modules.
model.neck = dict(
    type='SequentialNeck',
    layers=[
        dict(type=nn.AdaptiveAvgPool2d, output_size=1),
        dict(type=nn.Flatten),
        dict(type=Linear, in_features=512, out_features=256),
        dict(type=nn.ReLU, inplace=True),
    ])
model.head.in_channels = 256

# Mixed precision with an explicit dtype.
optim_wrapper.update(dict(type='AmpOptimWrapper', dtype=torch.float16))

# `train_pipeline` is a separate object from
# `train_dataloader.dataset.pipeline` once imported, so this edit does not
# reach the dataloader ...
train_pipeline[0].padding = 2
# ... while this one replaces the dataloader's pipeline explicitly.
val_dataloader.dataset.pipeline = [
    dict(type='Resize', scale=32), *test_pipeline
]
train_cfg.max_epochs = 100
