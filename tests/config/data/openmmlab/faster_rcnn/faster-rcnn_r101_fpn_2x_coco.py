_base_ = './faster-rcnn_r101_fpn_1x_coco.py'

# learning policy: twice as long, milestones moved accordingly
max_epochs = 24
train_cfg = dict(max_epochs=max_epochs)
# Lists are never merged element-wise: this replaces the parent's list.
param_scheduler = [
    dict(
        type='LinearLR', start_factor=0.001, by_epoch=False, begin=0, end=500),
    dict(
        type='MultiStepLR',
        begin=0,
        end=max_epochs,
        by_epoch=True,
        milestones=[16, 22],
        gamma=0.1)
]
