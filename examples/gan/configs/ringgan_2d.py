# A 2-D GAN with two optimizers. Train with: python examples/gan/train.py
custom_imports = dict(imports=["examples.gan.gan"], allow_failed_imports=False)
default_scope = "cadence"

model = dict(type="RingGAN", noise_dim=8, hidden=128)
ring = dict(num_modes=8, radius=2.0, std=0.05)
train_dataloader = dict(
    batch_size=256,
    sampler=dict(type="InfiniteSampler", shuffle=True),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type="RingDataset", num_samples=8192, seed=0, **ring),
)
val_dataloader = dict(
    batch_size=1024,
    sampler=dict(type="DefaultSampler", shuffle=False),
    collate_fn=dict(type="default_collate"),
    dataset=dict(type="RingDataset", num_samples=2048, seed=1, **ring),
)
val_evaluator = dict(type="ModeCoverage", **ring)

# No `type`/`optimizer` at the top: one optim wrapper per sub-module -> OptimWrapperDict.
optim_wrapper = dict(
    generator=dict(optimizer=dict(type="Adam", lr=1e-3, betas=(0.5, 0.999))),
    discriminator=dict(optimizer=dict(type="Adam", lr=1e-3, betas=(0.5, 0.999))),
)
# One scheduler list per wrapper (a single list would apply to both).
param_scheduler = dict(
    generator=[dict(type="CosineAnnealingLR", T_max=1500, eta_min=1e-4, by_epoch=False)],
    discriminator=[],
)
train_cfg = dict(type="IterBasedTrainLoop", max_iters=1500, val_interval=500)
val_cfg = dict()

default_hooks = dict(
    logger=dict(type="LoggerHook", interval=100),
    checkpoint=dict(type="CheckpointHook", interval=500, by_epoch=False, max_keep_ckpts=1),
)
log_processor = dict(by_epoch=False)  # iteration-based: log "Iter(train) [n/max]"
randomness = dict(seed=0)
work_dir = "./work_dirs/{{fileBasenameNoExtension}}"
