_base_ = [
    '../_base_/datasets/points.py', '../_base_/schedules/schedule_4e.py',
    '../_base_/default_runtime.py'
]

custom_imports = dict(imports=['toyproj'], allow_failed_imports=False)

model = dict(type='ToyNet', hidden_channels=16, num_classes=2)

custom_hooks = [dict(type='LossTrendHook', interval=4, window_size=4)]
