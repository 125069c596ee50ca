"""Ranks of the 2 -> 3 process trial (tests/strategies/test_reshard_curves.py; module level
so that run_distributed can pickle them).

The global batch stays 6: 2 ranks x 3, then 3 ranks x 2, over 48 points (8 iterations an
epoch). ``save``: 2 ranks train to the checkpoint at iteration ``AT``. ``resume``: 3 ranks
resume it and train to ``ITERS`` (into the second epoch). ``reference``: 3 ranks train
uninterrupted from iteration 0; before iteration ``AT`` they take the checkpoint's
weights and optimizer state through the strategy alone (no position, schedule, sampler
or random streams: those are the uninterrupted run's own). Each rank records its loss
at every iteration after ``AT`` and, at the end, the whole weights (gathered).
"""

from __future__ import annotations

import os
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

AT, ITERS, SIZE, GLOBAL_BATCH = 3, 12, 48, 6
STRATEGIES = {
    "ddp": dict(type="DDPStrategy"),
    "fsdp": dict(type="FSDPStrategy", wrap_policy=["Linear"]),
}


class Points(Dataset):
    def __init__(self, n: int = SIZE) -> None:
        g = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(n, 4, generator=g), torch.randint(0, 2, (n,), generator=g)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"inputs": self.x[i], "data_samples": self.y[i]}


def _model_class() -> type:
    from cadence.model import BaseModel

    class TwoLinear(BaseModel):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(4, 8), nn.Linear(8, 2)

        def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
            logits = self.b(torch.relu(self.a(inputs)))
            if mode == "loss":
                return {"loss": F.cross_entropy(logits, torch.as_tensor(data_samples))}
            return logits

    return TwoLinear


def _full_weights(runner: Any) -> dict[str, bytes]:
    """The whole weights as bytes (every rank calls it: FSDP gathers)."""
    strategy = runner.strategy
    if type(strategy).__name__ == "FSDPStrategy":
        from torch.distributed.checkpoint.state_dict import (
            StateDictOptions,
            get_model_state_dict,
        )

        options = StateDictOptions(full_state_dict=True, cpu_offload=True)
        state = get_model_state_dict(runner.model, options=options)
    else:
        state = strategy.unwrap(runner.model).state_dict()
    return {k: v.detach().cpu().contiguous().numpy().tobytes() for k, v in state.items()}


def run(kind: str, strategy: str, root: str) -> dict[str, Any]:
    from cadence.checkpoint.files import read_checkpoint
    from cadence.config import Config
    from cadence.hooks import Hook
    from cadence.registry import DATASETS, MODELS
    from cadence.runner import Runner

    torch.set_num_threads(1)  # one thread: the sums' order does not follow the load
    DATASETS.register_module(module=Points, name="GrowPoints", force=True)
    MODELS.register_module(module=_model_class(), name="TwoLinear", force=True)
    saved = os.path.join(root, "save", f"iter_{AT}.pth")
    world = torch.distributed.get_world_size()
    record: dict[str, Any] = {"losses": {}}

    class Recorder(Hook):
        priority = "LOWEST"

        def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
            if kind == "reference" and runner.iter == AT:  # the checkpoint's weights and
                checkpoint = read_checkpoint(saved, "cpu")  # optimizer, nothing else
                runner.strategy.restore(
                    runner.trained, saved, checkpoint, resume_param_scheduler=False
                )

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
            record["losses"][runner.iter + 1] = float(outputs["loss"])
            if kind == "save" and runner.iter + 1 == AT:
                runner.train_loop.stop_training = True

    cfg = dict(
        model=dict(type="TwoLinear"), launcher="pytorch", log_level="WARNING",
        work_dir=os.path.join(root, kind),
        resume=saved if kind == "resume" else False,
        train_dataloader=dict(batch_size=GLOBAL_BATCH // world, dataset=dict(type="GrowPoints"),
                              sampler=dict(type="DefaultSampler", shuffle=True),
                              collate_fn=dict(type="default_collate")),
        train_cfg=dict(by_epoch=False, max_iters=ITERS),
        optim_wrapper=dict(optimizer=dict(type="Adam", lr=0.01)),
        param_scheduler=[dict(type="CosineAnnealingLR", T_max=ITERS, by_epoch=False)],
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=AT, by_epoch=False,
                                           save_last=False)),
        strategy=STRATEGIES[strategy], randomness=dict(seed=1),
    )  # fmt: skip
    runner = Runner.from_cfg(Config(cfg))
    runner.register_hook(Recorder())
    runner.train()
    record["weights"] = _full_weights(runner)
    return record
