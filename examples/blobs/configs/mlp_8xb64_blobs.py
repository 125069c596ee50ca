# 8 Gaussian blobs, MLP, AdamW with warm-up and cosine decay. Train with
#   python examples/blobs/train.py examples/blobs/configs/mlp_8xb64_blobs.py
_base_ = [
    "./_base_/models/mlp.py",
    "./_base_/datasets/blobs16.py",
    "./_base_/schedules/adamw_20e.py",
    "./_base_/default_runtime.py",
]
work_dir = "./work_dirs/{{fileBasenameNoExtension}}"
