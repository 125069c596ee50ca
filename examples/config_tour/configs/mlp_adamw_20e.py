# An experiment in the OpenMMLab layout: three bases, then only what changes.
_base_ = [
    "./_base_/models/mlp.py",
    "./_base_/schedules/sgd_10e.py",
    "./_base_/default_runtime.py",
]

model = dict(hidden=dict(width=256))  # merged into the base model
optim_wrapper = dict(
    optimizer=dict(_delete_=True, type="AdamW", lr=1e-3, weight_decay=0.05),  # replaced
    clip_grad=dict(max_norm=1.0),
)
train_cfg = dict(max_epochs=20)
param_scheduler = [  # lists are replaced, not merged
    dict(type="LinearLR", start_factor=0.01, by_epoch=False, begin=0, end=200),
    dict(type="CosineAnnealingLR", T_max=20, by_epoch=True),
]
work_dir = "./work_dirs/{{fileBasenameNoExtension}}"
base_lr = {{_base_.optim_wrapper.optimizer.lr}}  # the base's value, before this file's change
