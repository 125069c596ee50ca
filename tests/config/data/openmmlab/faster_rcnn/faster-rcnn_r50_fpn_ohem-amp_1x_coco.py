_base_ = './faster-rcnn_r50_fpn_1x_coco.py'

# Online hard example mining in the R-CNN stage. OHEMSampler does not accept
# `neg_pos_ub`/`add_gt_as_proposals` in the same way, so start from scratch.
model = dict(
    train_cfg=dict(
        rcnn=dict(
            sampler=dict(
                _delete_=True,
                type='OHEMSampler',
                num=512,
                pos_fraction=0.25,
                neg_pos_ub=-1,
                add_gt_as_proposals=True))))

# Mixed precision: replace the whole optimizer wrapper.
optim_wrapper = dict(
    _delete_=True,
    type='AmpOptimWrapper',
    loss_scale='dynamic',
    optimizer=dict(type='SGD', lr=0.02, momentum=0.9, weight_decay=0.0001))

train_dataloader = dict(
    batch_size=4,
    dataset=dict(filter_cfg=dict(min_size=16)))
auto_scale_lr = dict(enable=True)
