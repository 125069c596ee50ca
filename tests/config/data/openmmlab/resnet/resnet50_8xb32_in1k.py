_base_ = [
    '../_base_/models/resnet50.py', '../_base_/datasets/imagenet_bs32.py',
    '../_base_/schedules/imagenet_bs256.py', '../_base_/default_runtime.py'
]

default_scope = 'mmpretrain'
default_hooks = dict(
    logger=dict(interval=100),
    checkpoint=dict(max_keep_ckpts=3),
    # classification has its own visualization hook with other arguments
    visualization=dict(_delete_=True, type='VisualizationHook', enable=False))
visualizer = dict(type='UniversalVisualizer')
log_processor = dict(window_size=10)
