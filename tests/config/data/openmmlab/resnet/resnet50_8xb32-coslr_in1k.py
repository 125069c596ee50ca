_base_ = ['./resnet50_8xb32_in1k.py']

# Cosine decay over the parent's whole schedule (scalar substitution).
param_scheduler = [
    dict(
        type='CosineAnnealingLR',
        T_max={{_base_.train_cfg.max_epochs}},
        by_epoch=True,
        begin=0,
        end={{_base_.train_cfg.max_epochs}})
]

# Evaluate the test split with the parent's test pipeline (list
# substitution) and keep a copy of the parent's optimizer (dict
# substitution) for reference.
test_dataloader = dict(
    dataset=dict(split='test', pipeline={{_base_.test_pipeline}}))
reference_optimizer = {{_base_.optim_wrapper.optimizer}}
topk = {{_base_.model.head.topk}}
