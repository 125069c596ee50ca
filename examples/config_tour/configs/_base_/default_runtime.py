default_scope = "cadence"
default_hooks = dict(
    timer=dict(type="IterTimerHook"),
    logger=dict(type="LoggerHook", interval=50),
    param_scheduler=dict(type="ParamSchedulerHook"),
    checkpoint=dict(type="CheckpointHook", interval=1),
)
env_cfg = dict(cudnn_benchmark=False, dist_cfg=dict(backend="gloo"))
log_level = "INFO"
load_from = None
resume = False
