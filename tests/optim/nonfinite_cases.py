"""Ranks of the non-finite trials (tests/optim/test_nonfinite_trials.py; module level so
that run_distributed can pickle them).

One config, two runs. ``'poisoned'``: rank 1's loss at iteration ``BAD`` (0-based) is
multiplied by NaN after the forward, and ``skip_nonfinite=True`` must skip that step on
both ranks. ``'by_construction'``: no NaN; at iteration ``BAD`` the wrapper's ``step``
does nothing (the gradients are zeroed as after any step). Both runs consume the same
batches and the same random numbers (the forward and backward run alike; the model
draws none), and the schedulers advance every iteration in both, so the two may differ
only by what the guard leaves behind. Each rank records its own state (FSDP: its
shards) after every iteration: parameters, optimizer state, loss-scaler state,
learning rate and loss.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

ITERS, BAD = 8, 3
STRATEGIES = {
    "ddp": dict(type="DDPStrategy"),
    "fsdp": dict(type="FSDPStrategy", wrap_policy=["Linear"]),
}
WRAPPERS = {
    # float16 autocast on CPU with a dynamic loss scaler that grows every 2 steps
    "amp_fp16": dict(type="AmpOptimWrapper", dtype="float16",
                     loss_scale=dict(init_scale=256.0, growth_interval=2)),
    "plain": dict(type="OptimWrapper"),
}  # fmt: skip


class Points(Dataset):
    def __init__(self, n: int = 64) -> None:
        g = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(n, 4, generator=g), torch.randint(0, 2, (n,), generator=g)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"inputs": self.x[i], "data_samples": self.y[i]}


def _model_class() -> type:
    from cadence.model import BaseModel

    class Poisonable(BaseModel):
        poison = False

        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = nn.Linear(4, 8), nn.Linear(8, 2)

        def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
            logits = self.b(torch.relu(self.a(inputs))).float()
            if mode != "loss":
                return logits
            loss = F.cross_entropy(logits, torch.as_tensor(data_samples))
            return {"loss": loss * math.nan if self.poison else loss}

    return Poisonable


def _local(value: Any) -> Any:
    """``value`` with every tensor (a DTensor's local shard) as its dtype, shape and bytes
    (plain data: the queue back to the test cannot carry tensors of a finished process)."""
    if isinstance(value, torch.Tensor):
        local = value.to_local() if hasattr(value, "to_local") else value
        local = local.detach().cpu().contiguous()
        raw = local.reshape(-1).view(torch.uint8) if local.numel() else local.new_empty(0)
        return (str(local.dtype), tuple(local.shape), bytes(raw.numpy().tobytes()))
    if isinstance(value, dict):
        return {k: _local(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_local(v) for v in value]
    return value


def snapshot(runner: Any) -> dict[str, Any]:
    """This rank's own training state."""
    wrapper = runner.optim_wrapper
    module = runner.strategy.unwrap(runner.model)
    scaler = getattr(wrapper, "loss_scaler", None)
    return {
        "params": {name: _local(p) for name, p in module.named_parameters()},
        "optimizer": _local(wrapper.optimizer.state_dict()["state"]),
        "scaler": dict(scaler.state_dict()) if scaler is not None else None,
        "lr": wrapper.optimizer.param_groups[0]["lr"],
    }


def train(kind: str, strategy: str, wrapper: str, work_dir: str) -> dict[str, Any]:
    from cadence.config import Config
    from cadence.hooks import Hook
    from cadence.registry import DATASETS, MODELS
    from cadence.runner import Runner

    torch.set_num_threads(1)  # one thread: the sums' order does not follow the load
    DATASETS.register_module(module=Points, name="Points", force=True)
    MODELS.register_module(module=_model_class(), name="Poisonable", force=True)
    record: dict[str, Any] = {"states": [], "losses": []}

    class Fault(Hook):
        priority = "HIGHEST"

        def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
            if runner.iter == 0:
                record["start"] = snapshot(runner)
            bad = runner.iter == BAD
            if kind == "poisoned":
                runner.strategy.unwrap(runner.model).poison = bad and runner.rank == 1
            elif bad:  # by construction: this step is not taken
                runner.optim_wrapper.step = lambda **kwargs: None
            elif "step" in vars(runner.optim_wrapper):
                del runner.optim_wrapper.step

    class Recorder(Hook):
        priority = "LOWEST"  # after the scheduler hook

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
            record["states"].append(snapshot(runner))
            record["losses"].append(float(outputs["loss"]))

    cfg = dict(
        model=dict(type="Poisonable"), work_dir=work_dir, launcher="pytorch",
        train_dataloader=dict(batch_size=4, dataset=dict(type="Points"),
                              sampler=dict(type="DefaultSampler", shuffle=True),
                              collate_fn=dict(type="default_collate")),
        train_cfg=dict(by_epoch=False, max_iters=ITERS),
        optim_wrapper=dict(WRAPPERS[wrapper], optimizer=dict(type="Adam", lr=0.01),
                           skip_nonfinite=True),
        param_scheduler=[dict(type="LinearLR", start_factor=0.5, by_epoch=False, end=ITERS)],
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=-1,
                                           save_last=False)),
        strategy=STRATEGIES[strategy], randomness=dict(seed=1), log_level="WARNING",
    )  # fmt: skip
    runner = Runner.from_cfg(Config(cfg))
    runner.register_hook(Fault())
    runner.register_hook(Recorder())
    runner.train()
    record["skipped"] = runner.optim_wrapper.nonfinite_guard.skipped
    return record


def both(strategy: str, wrapper: str, root: str) -> dict[str, Any]:
    """The poisoned run and the one skipping the same step by construction, in one group."""
    return {kind: train(kind, strategy, wrapper, f"{root}/{kind}")
            for kind in ("poisoned", "by_construction")}  # fmt: skip
