# scikit-learn's 8x8 digits, a small CNN, AdamW with warm-up and cosine decay. Train with
#   python examples/digits/train.py
# or, from the repository root: python -m cadence train examples/digits/configs/cnn_1xb32_digits.py
_base_ = [
    "./_base_/models/cnn.py",
    "./_base_/datasets/digits.py",
    "./_base_/schedules/adamw_20e.py",
    "./_base_/default_runtime.py",
]
work_dir = "./work_dirs/{{fileBasenameNoExtension}}"
