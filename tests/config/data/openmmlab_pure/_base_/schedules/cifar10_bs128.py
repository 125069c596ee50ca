# 200-epoch CIFAR schedule; the optimizer class is referenced directly.
from torch.optim import SGD

optim_wrapper = dict(
    type='OptimWrapper',
    optimizer=dict(type=SGD, lr=0.1, momentum=0.9, weight_decay=0.0001),
    clip_grad=None)

param_scheduler = [
    dict(type='LinearLR', start_factor=0.1, by_epoch=True, begin=0, end=5,
         convert_to_iter_based=True),
    dict(type='MultiStepLR', by_epoch=True, begin=5, milestones=[100, 150],
         gamma=0.1),
]

train_cfg = dict(by_epoch=True, max_epochs=200, val_interval=1)
val_cfg = dict()
test_cfg = dict()

# Base batch size used when `--auto-scale-lr` is given: 8 GPUs x 16 images.
auto_scale_lr = dict(base_batch_size=128)
