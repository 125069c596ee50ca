dataset_type = "BlobsDataset"
data_cfg = dict(dim=16, num_classes=8, noise=3.0)
train_dataloader = dict(
    batch_size=64,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=True),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type=dataset_type, num_samples=8192, split_seed=0, **data_cfg),
)
val_dataloader = dict(
    batch_size=256,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=False),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type=dataset_type, num_samples=2048, split_seed=1, **data_cfg),
)
test_dataloader = dict(
    batch_size=256,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=False),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type=dataset_type, num_samples=2048, split_seed=2, **data_cfg),
)
val_evaluator = dict(type="Accuracy", topk=(1, 3))
test_evaluator = val_evaluator
