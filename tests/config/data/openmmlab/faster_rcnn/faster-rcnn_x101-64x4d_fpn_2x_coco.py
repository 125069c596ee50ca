_base_ = ['./faster-rcnn_r101_fpn_2x_coco.py']
# ResNeXt takes different arguments from ResNet, so the parent's backbone is
# thrown away rather than merged.
model = dict(
    backbone=dict(
        _delete_=True,
        type='ResNeXt',
        depth=101,
        groups=64,
        base_width=4,
        num_stages=4,
        out_indices=(0, 1, 2, 3),
        frozen_stages=1,
        norm_cfg=dict(type='BN', requires_grad=True),
        style='pytorch',
        init_cfg=dict(
            type='Pretrained', checkpoint='open-mmlab://resnext101_64x4d')))

# The parent's `clip_grad` is None; `_delete_` replaces it with a dict.
optim_wrapper = dict(
    optimizer=dict(lr=0.01),
    clip_grad=dict(_delete_=True, max_norm=35, norm_type=2))
