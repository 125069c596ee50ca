# scikit-learn's 8x8 digits (pixel values 0..16), split 70/10/20 by a fixed permutation.
dataset_type = "DigitsDataset"
train_pipeline = [dict(type="RandomShift", max_shift=1), dict(type="PackDigitInputs")]
test_pipeline = [dict(type="PackDigitInputs")]
train_dataloader = dict(
    batch_size=32,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=True),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type=dataset_type, split="train", pipeline=train_pipeline),
)
noisy_pipeline = [dict(type="AddNoise", std=4.0), dict(type="PackDigitInputs")]
# Two validation sets, each with its own Accuracy: metrics are logged as val/clean/...
# and val/noisy/... ('noisy': the test split with fixed Gaussian noise added).
val_dataloader = dict(
    clean=dict(
        batch_size=256,
        num_workers=0,
        sampler=dict(type="DefaultSampler", shuffle=False),
        collate_fn=dict(type="default_collate"),
        dataset=dict(type=dataset_type, split="val", pipeline=test_pipeline),
    ),
    noisy=dict(
        batch_size=256,
        num_workers=0,
        sampler=dict(type="DefaultSampler", shuffle=False),
        collate_fn=dict(type="default_collate"),
        dataset=dict(type=dataset_type, split="test", pipeline=noisy_pipeline),
    ),
)
test_dataloader = dict(
    batch_size=256,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=False),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type=dataset_type, split="test", pipeline=test_pipeline),
)
val_evaluator = dict(type="Accuracy", topk=(1,))  # one per set, built from this config
test_evaluator = val_evaluator
