optim_wrapper = dict(type="OptimWrapper", optimizer=dict(type="AdamW", lr=3e-3, weight_decay=1e-4))
param_scheduler = [
    dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=40),
    dict(type="CosineAnnealingLR", T_max=20, by_epoch=True, begin=0, end=20,
         convert_to_iter_based=True),
]  # fmt: skip
train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=20, val_interval=5)
val_cfg = dict(compute_loss=True)  # val/clean/loss, val/noisy/loss (DigitsCNN.loss_and_predict)
test_cfg = dict()
auto_scale_lr = dict(base_batch_size=32, enable=False)
