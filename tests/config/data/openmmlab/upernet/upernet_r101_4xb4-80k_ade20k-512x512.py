_base_ = './upernet_r50_4xb4-80k_ade20k-512x512.py'
model = dict(
    pretrained='open-mmlab://resnet101_v1c',
    backbone=dict(depth=101),
    # A deeper auxiliary head; the parent's arguments do not carry over.
    auxiliary_head=dict(
        _delete_=True,
        type='FCNHead',
        in_channels=1024,
        in_index=2,
        channels=256,
        num_convs=2,
        concat_input=True,
        dropout_ratio=0.1,
        num_classes=150,
        norm_cfg={{_base_.norm_cfg}},
        align_corners=False,
        loss_decode=dict(
            type='CrossEntropyLoss', use_sigmoid=False, loss_weight=0.4)))
