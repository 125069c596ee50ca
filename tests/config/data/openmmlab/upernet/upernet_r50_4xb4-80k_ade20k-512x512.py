_base_ = [
    '../_base_/models/upernet_r50.py', '../_base_/datasets/ade20k.py',
    '../_base_/datasets/ade20k_meta.json', '../_base_/seg_runtime.py',
    '../_base_/schedules/schedule_80k.py',
    '../_base_/schedules/ema_hooks.yaml'
]
crop_size = (512, 512)
data_preprocessor = dict(size=crop_size)
model = dict(
    data_preprocessor=data_preprocessor,
    decode_head=dict(num_classes=150),
    auxiliary_head=dict(num_classes=150))
train_dataloader = dict(dataset=dict(metainfo={{_base_.metainfo}}))
val_dataloader = dict(dataset=dict(metainfo={{_base_.metainfo}}))
test_dataloader = val_dataloader
