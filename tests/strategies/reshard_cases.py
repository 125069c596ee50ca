"""Functions run inside spawned ranks by the resharding test (module level: picklable).

One process group trains and saves a checkpoint mid-epoch with every strategy, or
resumes each of them; each run records the state right after the save or the resume
(full weights and optimizer state, gathered the strategy's way) and the dataset
indices every step trained on.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

STRATEGIES = {
    "ddp": dict(type="DDPStrategy"),
    "fsdp": dict(type="FSDPStrategy", wrap_policy=["Linear"]),
    "zero2": dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=2)),
    "zero3": dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=3)),
}
SIZE, BATCH, SAVED_AT = 20, 2, 2  # 2 ranks x 2 x 2 steps: 8 of 20 samples, 12 left


class IndexedPoints(Dataset):
    """Random points whose last input column is the sample's index (the model ignores it)."""

    def __init__(self, n: int = SIZE) -> None:
        g = torch.Generator().manual_seed(0)
        self.x = torch.randn(n, 4, generator=g)
        self.y = torch.randint(0, 2, (n,), generator=g)

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int) -> dict[str, Any]:
        inputs = torch.cat([self.x[i], torch.tensor([float(i)])])
        return {"inputs": inputs, "data_samples": self.y[i]}


def _model_class() -> type:
    from cadence.model import BaseModel

    class TwoLayers(BaseModel):
        """Two linear layers with BatchNorm between and a frozen offset: state that no
        optimizer holds (buffers, a parameter without gradient)."""

        def __init__(self) -> None:
            super().__init__()
            self.a, self.norm, self.b = nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Linear(6, 2)
            self.offset = nn.Parameter(torch.randn(2), requires_grad=False)

        def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
            logits = self.b(torch.relu(self.norm(self.a(inputs[:, :-1])))) + self.offset
            if mode == "loss":
                return {"loss": F.cross_entropy(logits, torch.as_tensor(data_samples))}
            return logits

    return TwoLayers


def _arrays(state: dict[str, Any], prefix: str = "") -> dict[str, np.ndarray]:
    """Every tensor of a nested state dict, by dotted key."""
    out: dict[str, np.ndarray] = {}
    for key, value in state.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(_arrays(value, name + "."))
        elif isinstance(value, torch.Tensor):
            out[name] = value.detach().cpu().float().numpy().copy()
    return out


def full_state(runner: Any) -> dict[str, np.ndarray]:
    """Weights and optimizer state whole, gathered the strategy's way (every rank calls
    it; complete on rank 0)."""
    strategy = runner.strategy
    kind = type(strategy).__name__
    if kind == "DeepSpeedStrategy":
        from deepspeed.utils import safe_get_full_fp32_param, safe_get_full_optimizer_state

        out = _arrays(strategy.model_state_dict(runner.model))  # every weight and buffer, gathered
        out["global_steps"] = np.array(strategy.engine.global_steps)
        for name, param in strategy.engine.module.named_parameters():
            if param.requires_grad:  # the optimizer's fp32 copy and moments
                out[f"{name}.fp32"] = safe_get_full_fp32_param(param).numpy().copy()
                for key in ("exp_avg", "exp_avg_sq"):
                    state = safe_get_full_optimizer_state(param, key)
                    out[f"{name}.{key}"] = state.numpy().copy()
        return out
    if kind == "FSDPStrategy":
        from torch.distributed.checkpoint.state_dict import (
            StateDictOptions,
            get_model_state_dict,
            get_optimizer_state_dict,
        )

        options = StateDictOptions(full_state_dict=True, cpu_offload=True)
        model, optimizer = runner.model, runner.optim_wrapper.optimizer
        optim = get_optimizer_state_dict(model, optimizer, options=options)
        return {
            **_arrays(get_model_state_dict(model, options=options)),
            **_arrays(optim.get("state", {}), "optim."),
        }
    module = strategy.unwrap(runner.model)
    optim = runner.optim_wrapper.optimizer.state_dict()["state"]
    return {**_arrays(module.state_dict()), **_arrays(optim, "optim.")}


def _run(work_dir: str, strategy: dict, resume: str | bool) -> dict[str, Any]:
    from cadence.config import Config
    from cadence.hooks import Hook
    from cadence.registry import DATASETS, MODELS
    from cadence.runner import Runner

    DATASETS.register_module(module=IndexedPoints, force=True)
    MODELS.register_module(module=_model_class(), name="TwoLayers", force=True)
    record: dict[str, Any] = {"seen": []}

    class Recorder(Hook):
        priority = "LOWEST"  # after the checkpoint hook

        def before_train(self, runner: Any) -> None:
            if resume:  # the state as restored, before any step
                record["state"] = full_state(runner)

        def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
            record["seen"].extend(int(i) for i in data_batch["inputs"][:, -1])

        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None) -> None:
            if not resume and runner.iter + 1 == SAVED_AT:  # the checkpoint was just written
                record["state"] = full_state(runner)
                runner.train_loop.stop_training = True

    cfg = dict(
        model=dict(type="TwoLayers"), work_dir=work_dir, launcher="pytorch", resume=resume,
        train_dataloader=dict(
            batch_size=BATCH, dataset=dict(type="IndexedPoints"),
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(max_epochs=1), optim_wrapper=dict(optimizer=dict(type="Adam", lr=0.01)),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=SAVED_AT,
                                           by_epoch=False, save_last=False)),
        # another seed on resume: whatever is not restored keeps another initial value
        randomness=dict(seed=4 if resume else 3), strategy=strategy, log_level="WARNING",
    )  # fmt: skip
    runner = Runner.from_cfg(Config(cfg))
    runner.register_hook(Recorder())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        runner.train()
    record["warnings"] = [str(w.message) for w in caught]
    record["epoch"], record["rank"] = runner.epoch, runner.rank
    return record


def save_every_strategy(root: str) -> dict[str, Any]:
    """Train each strategy until its checkpoint at iteration ``SAVED_AT`` (a 2-rank group)."""
    return {name: _run(os.path.join(root, name), s, False) for name, s in STRATEGIES.items()}


def resume_every_strategy(root: str, world: int) -> dict[str, Any]:
    """Resume each strategy's checkpoint in this group of ``world`` ranks and train to the
    end of the epoch."""
    return {
        name: _run(
            os.path.join(root, f"{name}_on_{world}"),
            strategy,
            os.path.join(root, name, f"iter_{SAVED_AT}.pth"),
        )  # fmt: skip
        for name, strategy in STRATEGIES.items()
    }
