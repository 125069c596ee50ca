# The digits example with DeepSpeed ZeRO stage 2 (pip install 'cadence[deepspeed]';
# on a CPU-only machine the strategy sets DS_ACCELERATOR=cpu). From the repository root:
#   torchrun --nproc-per-node 2 -m cadence train \
#       examples/distributed/configs/cnn_2xb16_digits_deepspeed.py --launcher pytorch
_base_ = ["./cnn_2xb16_digits_ddp.py"]

strategy = dict(_delete_=True, type="DeepSpeedStrategy", zero_optimization=dict(stage=2))
work_dir = "./work_dirs/{{fileBasenameNoExtension}}"
