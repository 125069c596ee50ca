# The digits example with a custom loop and a custom hook, both chosen by name:
#   python examples/custom_hook_and_loop/train.py
_base_ = ["../../digits/configs/cnn_1xb32_digits.py"]

custom_imports = dict(
    imports=["examples.digits.digits", "examples.custom_hook_and_loop.components"],
    allow_failed_imports=False,
)
# Replaces the base's EpochBasedTrainLoop (keys not given here are kept from the base).
train_cfg = dict(type="TargetLossTrainLoop", target_loss=0.05)
custom_hooks = [dict(type="ConfusionMatrixHook", num_classes=10)]
work_dir = "./work_dirs/{{fileBasenameNoExtension}}"
