# Multigrid training (Wu et al., CVPR 2020) of a tiny video model on moving squares.
#   python examples/multigrid/train.py examples/multigrid/configs/tinyvideo_multigrid.py
# The original schedule: 8 epochs at batch 8, 16 frames, crop 32, LR x0.1 at epochs 4 and 6.
# MultigridHook turns it into long cycles (smaller clips, larger batches) with short
# cycles (crop varied per iteration), 8 x epoch_factor epochs, and a fine-tuning phase
# at the base shape; it logs the schedule table when training starts and sets the LR.
custom_imports = dict(imports=["examples.multigrid.video"], allow_failed_imports=False)
default_scope = "cadence"

model = dict(type="TinyVideoNet", num_classes=4, width=32)
train_dataloader = dict(
    batch_size=8,  # the base batch size; multigrid stages multiply it
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=True),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type="MovingSquares", num_samples=256, seed=0),
)
val_dataloader = dict(
    batch_size=64,
    num_workers=0,
    sampler=dict(type="DefaultSampler", shuffle=False),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type="MovingSquares", num_samples=128, seed=1),
)
test_dataloader = dict(val_dataloader, dataset=dict(type="MovingSquares", num_samples=256, seed=2))
val_evaluator = dict(type="Accuracy")
test_evaluator = val_evaluator

optim_wrapper = dict(optimizer=dict(type="SGD", lr=0.02, momentum=0.9, weight_decay=1e-4))
param_scheduler = None  # the multigrid hook sets the learning rate
train_cfg = dict(type="EpochBasedTrainLoop", max_epochs=8, val_interval=4)
val_cfg = dict()
test_cfg = dict()

custom_hooks = [
    dict(
        type="MultigridHook",
        milestones=[4, 6],  # LR steps of the original schedule; after 6: fine-tuning
        gamma=0.1,
        base_frames=16,
        base_crop_size=32,
        epoch_factor=1.5,
        long_cycle_factors=[(0.25, 0.5**0.5), (0.5, 0.5**0.5), (0.5, 1), (1, 1)],
        short_cycle_factors=[0.5, 0.5**0.5],
    )
]
default_hooks = dict(
    logger=dict(type="LoggerHook", interval=20),
    checkpoint=dict(type="CheckpointHook", interval=4, max_keep_ckpts=1),
)
randomness = dict(seed=0)
env_cfg = dict(dist_cfg=dict(backend="gloo"))
log_level = "INFO"
work_dir = "./work_dirs/{{fileBasenameNoExtension}}"
