_base_ = ['./resnet50_8xb32_in1k.py']

# Values of the parents are reachable through the `_base_` variable.
model = dict(backbone=dict(depth=_base_.model.backbone.depth * 2 + 1))

# Same pipeline as the parent with a Pillow-backed crop in second position.
train_pipeline = _base_.train_pipeline[:1] + [
    dict(type='RandomResizedCrop', scale=224, backend='pillow')
] + _base_.train_pipeline[2:]
train_dataloader = dict(dataset=dict(pipeline=train_pipeline))

auto_scale_lr = dict(base_batch_size=_base_.train_dataloader.batch_size * 8)
