optim_wrapper = dict(
    type="OptimWrapper",
    optimizer=dict(type="SGD", lr=0.1, momentum=0.9, weight_decay=1e-4),
    clip_grad=None,
)
param_scheduler = [
    dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=100),
    dict(type="MultiStepLR", milestones=[6, 9], gamma=0.1, by_epoch=True),
]
train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=10, val_interval=1)
