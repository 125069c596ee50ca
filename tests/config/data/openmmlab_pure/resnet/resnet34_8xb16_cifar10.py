from mmengine.config import read_base

with read_base():
    from .resnet18_8xb16_cifar10 import *

# Imported variables are config dicts: change them in place.
model.backbone.depth = 34
model.head.update(dict(topk=(1, 5), loss=dict(label_smoothing=0.1)))
val_evaluator = dict(type='Accuracy', topk=(1, 5))
test_evaluator = val_evaluator
default_hooks.checkpoint.max_keep_ckpts = 5
