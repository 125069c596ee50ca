custom_imports = dict(imports=["examples.blobs.blobs"], allow_failed_imports=False)
default_scope = "cadence"
default_hooks = dict(
    runtime_info=dict(type="RuntimeInfoHook"),
    timer=dict(type="IterTimerHook"),
    sampler_seed=dict(type="DistSamplerSeedHook"),
    logger=dict(type="LoggerHook", interval=20),
    param_scheduler=dict(type="ParamSchedulerHook"),
    checkpoint=dict(type="CheckpointHook", interval=5, max_keep_ckpts=2, save_best="auto"),
)
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend="gloo"))
log_level = "INFO"
load_from = None
resume = False
randomness = dict(seed=0)
