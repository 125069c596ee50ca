# optimizer
optim_wrapper = dict(
    optimizer=dict(type='SGD', lr=0.1, momentum=0.9, weight_decay=0.0001),
    paramwise_cfg=dict(
        norm_decay_mult=0.0,
        bias_decay_mult=0.0,
        custom_keys={
            'backbone.layer0': dict(lr_mult=0.1),
            'head': dict(lr_mult=1.0, decay_mult=0.5),
        }),
    clip_grad=dict(max_norm=35, norm_type=2))

# learning policy: 5 epochs of linear warm-up, then step decay
param_scheduler = [
    dict(
        type='LinearLR',
        start_factor=0.25,
        by_epoch=True,
        begin=0,
        end=5,
        convert_to_iter_based=True),
    dict(
        type='MultiStepLR',
        by_epoch=True,
        begin=5,
        milestones=[30, 60, 90],
        gamma=0.1),
]

# train, val, test setting
train_cfg = dict(by_epoch=True, max_epochs=100, val_interval=1)
val_cfg = dict()
test_cfg = dict()

# NOTE: `auto_scale_lr` is for automatically scaling LR,
# based on the actual training batch size.
auto_scale_lr = dict(base_batch_size=256)
