# The digits example with FSDP2: parameters, gradients and optimizer state sharded over
# the processes. From the repository root:
#   torchrun --nproc-per-node 2 -m cadence train \
#       examples/distributed/configs/cnn_2xb16_digits_fsdp.py --launcher pytorch
_base_ = ["./cnn_2xb16_digits_ddp.py"]

# Each Conv2d is its own shard unit; on GPUs add mixed_precision=dict(param_dtype="bfloat16").
strategy = dict(_delete_=True, type="FSDPStrategy", wrap_policy=["Conv2d"])
work_dir = "./work_dirs/{{fileBasenameNoExtension}}"
