# The digits example under DDP: 2 processes x 16 images = the same 32 per step as one
# process. From the repository root:
#   torchrun --nproc-per-node 2 -m cadence train \
#       examples/distributed/configs/cnn_2xb16_digits_ddp.py --launcher pytorch
_base_ = ["../../digits/configs/cnn_1xb32_digits.py"]

strategy = dict(type="DDPStrategy")  # the default when a launcher is given
train_dataloader = dict(batch_size=16)  # per process
# BatchNorm statistics differ per rank under DDP; average them before each evaluation.
custom_hooks = [dict(type="SyncBuffersHook")]
env_cfg = dict(dist_cfg=dict(backend="gloo"))  # nccl on GPUs
work_dir = "./work_dirs/{{fileBasenameNoExtension}}"
