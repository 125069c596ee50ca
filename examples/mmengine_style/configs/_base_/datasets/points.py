# dataset settings
dataset_type = 'PointDataset'
data_root = 'data/points/'

train_pipeline = [
    dict(type='RandomJitter', std=0.05),
    dict(type='PackPointInputs'),
]
test_pipeline = [dict(type='PackPointInputs')]

train_dataloader = dict(
    batch_size=8,
    num_workers=0,
    persistent_workers=False,
    sampler=dict(type='DefaultSampler', shuffle=True),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/train.json',
        pipeline=train_pipeline))
val_dataloader = dict(
    batch_size=16,
    num_workers=0,
    persistent_workers=False,
    drop_last=False,
    sampler=dict(type='DefaultSampler', shuffle=False),
    dataset=dict(
        type=dataset_type,
        data_root=data_root,
        ann_file='annotations/val.json',
        test_mode=True,
        pipeline=test_pipeline))
test_dataloader = val_dataloader

val_evaluator = dict(type='PointAccuracy')
test_evaluator = val_evaluator
