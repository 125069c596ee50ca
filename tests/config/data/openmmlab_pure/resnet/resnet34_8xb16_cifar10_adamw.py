from mmengine.config import read_base
from torch.optim import AdamW

with read_base():
    from .resnet34_8xb16_cifar10 import *

# `merge` understands `_delete_`: the SGD arguments (momentum) are dropped.
optim_wrapper.merge(
    dict(
        optimizer=dict(
            _delete_=True, type=AdamW, lr=1e-3, weight_decay=0.05),
        clip_grad=dict(max_norm=5.0),
        paramwise_cfg=dict(norm_decay_mult=0.0, bias_decay_mult=0.0)))

warmup_epochs = 5
param_scheduler = [
    dict(type='LinearLR', start_factor=1e-3, by_epoch=True, begin=0,
         end=warmup_epochs, convert_to_iter_based=True),
    dict(type='CosineAnnealingLR', eta_min=1e-5, by_epoch=True,
         begin=warmup_epochs, T_max=train_cfg.max_epochs - warmup_epochs,
         end=train_cfg.max_epochs),
]
auto_scale_lr.enable = True
