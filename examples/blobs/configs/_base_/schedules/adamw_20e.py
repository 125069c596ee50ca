optim_wrapper = dict(
    type="OptimWrapper",
    optimizer=dict(type="AdamW", lr=3e-3, weight_decay=0.05),
    clip_grad=dict(max_norm=1.0),
    paramwise_cfg=dict(norm_decay_mult=0.0, bias_decay_mult=0.0),
)
param_scheduler = [
    dict(type="LinearLR", start_factor=0.01, by_epoch=False, begin=0, end=100),
    dict(
        type="CosineAnnealingLR",
        T_max=19,
        by_epoch=True,
        begin=1,
        end=20,
        convert_to_iter_based=True,
    ),
]
train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=20, val_interval=5)
val_cfg = dict()
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=64, enable=False)
