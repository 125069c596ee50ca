# CIFAR-sized ResNet-18 classifier. The model classes are imported lazily:
# the config loader records where they come from but never imports them.
from mmpretrain.models import (GlobalAveragePooling, ImageClassifier,
                               LinearClsHead, ResNet_CIFAR)
from torch.nn import CrossEntropyLoss

model = dict(
    type=ImageClassifier,
    backbone=dict(
        type=ResNet_CIFAR,
        depth=18,
        num_stages=4,
        out_indices=(3, ),
        style='pytorch'),
    neck=dict(type=GlobalAveragePooling),
    head=dict(
        type=LinearClsHead,
        num_classes=10,
        in_channels=512,
        loss=dict(type=CrossEntropyLoss, label_smoothing=0.0),
    ))
