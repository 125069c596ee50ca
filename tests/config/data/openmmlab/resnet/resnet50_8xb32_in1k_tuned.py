_base_ = './resnet50_8xb32_in1k.py'

# Helpers used while evaluating this file. Modules and functions are dropped
# from the resulting config.
import math

custom_imports = dict(imports=['os.path'], allow_failed_imports=False)

__author__ = 'cadence test corpus'
__num_gpus__ = 8
_samples_per_gpu = 64
_num_train_images = 1281167


def _linear_scaled_lr(base_lr, batch_size, base_batch_size=256):
    return base_lr * batch_size / base_batch_size


def _epochs_to_iters(epochs):
    per_epoch = math.ceil(_num_train_images /
                          (_samples_per_gpu * __num_gpus__))
    return epochs * per_epoch


train_dataloader = dict(batch_size=_samples_per_gpu, num_workers=8)
optim_wrapper = dict(
    optimizer=dict(
        lr=_linear_scaled_lr(0.1, _samples_per_gpu * __num_gpus__),
        nesterov=True))
param_scheduler = [
    dict(
        type='LinearLR',
        start_factor=0.01,
        by_epoch=False,
        begin=0,
        end=_epochs_to_iters(2)),
    dict(
        type='CosineAnnealingLR',
        eta_min=1.0e-5,
        by_epoch=False,
        begin=_epochs_to_iters(2),
        end=_epochs_to_iters(100))
]
model = dict(
    backbone=dict(drop_path_rate=0.05),
    # The head has no `init_cfg` in any parent.
    head=dict(
        init_cfg=dict(_delete_=True, type='TruncNormal', layer='Linear',
                      std=0.02),
        cal_acc=math.isclose(0.1 + 0.2, 0.3)))
randomness = dict(seed=0, diff_rank_seed=True, deterministic=False)
