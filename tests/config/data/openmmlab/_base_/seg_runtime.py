# Runtime settings for the segmentation experiments. Unlike
# default_runtime.py it leaves ``default_hooks`` to the schedule file.
default_scope = 'mmseg'
env_cfg = dict(
    cudnn_benchmark=True,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'),
)
vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(
    type='SegLocalVisualizer', vis_backends=vis_backends, name='visualizer')
log_processor = dict(by_epoch=False)
log_level = 'INFO'
load_from = None
resume = False

tta_model = dict(type='SegTTAModel')

# Predefined variables are expanded per file: in this base file they describe
# seg_runtime.py itself, not the experiment that inherits from it.
work_dir = './work_dirs/{{fileBasenameNoExtension}}'
# Downloaded checkpoints are cached beside the config tree.
checkpoint_cache_dir = '{{fileDirname}}/../.cache/checkpoints'
