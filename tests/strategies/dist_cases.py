"""Functions run inside spawned ranks by the DDP tests (module level: picklable)."""

from __future__ import annotations

import os
import sys
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))


def _register_toys() -> None:
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "runner"))
    from runner_toys import Blobs, ToyClassifier

    from cadence.registry import DATASETS, MODELS

    DATASETS.register_module(module=Blobs, force=True)
    MODELS.register_module(module=ToyClassifier, force=True)
    MODELS.register_module(module=_no_bn_classifier(), force=True)


def _no_bn_classifier() -> type:
    """ToyClassifier without BatchNorm: per-rank batch statistics would differ from one
    process's, so only a BN-free model can equal a single-process run step for step."""
    from runner_toys import ToyClassifier
    from torch import nn

    class NoBNClassifier(ToyClassifier):
        def __init__(self, hidden: int = 16) -> None:
            super().__init__(hidden=hidden)
            self.backbone = nn.Sequential(nn.Linear(8, hidden), nn.ReLU())

    return NoBNClassifier


def config(work_dir: str, batch_size: int, max_epochs: int, strategy: Any, **extra: Any) -> dict:
    cfg = dict(
        model=dict(type="NoBNClassifier", hidden=16),
        work_dir=work_dir,
        train_dataloader=dict(
            batch_size=batch_size,
            dataset=dict(type="Blobs", n=128, seed=0),
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        val_dataloader=dict(
            batch_size=16,
            dataset=dict(type="Blobs", n=37, seed=1),
            sampler=dict(type="DefaultSampler", shuffle=False),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(max_epochs=max_epochs, val_interval=max_epochs),
        val_cfg=dict(),
        val_evaluator=dict(type="Accuracy"),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1)),
        randomness=dict(seed=11),
        strategy=strategy,
        **extra,
    )
    return cfg


def train_ddp(work_dir: str, max_epochs: int, resume: bool = False) -> dict[str, Any]:
    """Train with DDPStrategy in an existing 2-rank group; return params and metrics."""
    return train(work_dir, max_epochs, dict(type="DDPStrategy"), resume)


def train_fsdp(work_dir: str, max_epochs: int, resume: bool = False, **fsdp: Any) -> dict[str, Any]:
    """Train with FSDPStrategy (Linear layers sharded as units) in a 2-rank group."""
    strategy = dict(type="FSDPStrategy", wrap_policy=["Linear"], **fsdp)
    return train(work_dir, max_epochs, strategy, resume)


def train(
    work_dir: str, max_epochs: int, strategy: dict, resume: bool, **overrides: Any
) -> dict[str, Any]:
    """Train from :func:`config`; return full weights (as arrays), metrics and losses."""
    _register_toys()
    from cadence.config import Config
    from cadence.hooks import Hook
    from cadence.runner import Runner

    losses: list[float] = []

    class LossRecorder(Hook):
        def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
            losses.append(float(outputs["loss"]))

    cfg = config(work_dir, 8, max_epochs, strategy, resume=resume, launcher="pytorch")
    cfg.update(overrides)
    runner = Runner.from_cfg(Config(cfg))
    runner.register_hook(LossRecorder())
    runner.train()
    # plain arrays: tensors would travel back through shared memory of an exiting process
    state = runner.strategy.model_state_dict(runner.model)
    params = {k: v.detach().cpu().numpy().copy() for k, v in state.items()}
    metrics = runner.val()
    return {
        "rank": runner.rank,
        "world_size": runner.world_size,
        "params": params,
        "metrics": {k: float(v) for k, v in metrics.items()},
        "epoch": runner.epoch,
        "wrapped": type(runner.model).__name__,
        "losses": losses,
    }


def train_fsdp_bf16(work_dir: str, max_epochs: int) -> dict[str, Any]:
    """FSDP with bf16 compute, fp32 gradient reduction and recomputed backbone activations."""
    return train_fsdp(
        work_dir, max_epochs, mixed_precision=dict(param_dtype="bfloat16", reduce_dtype="float32"),
        activation_checkpointing=["Sequential"],
    )  # fmt: skip


def train_deepspeed(work_dir: str, max_epochs: int, stage: int, resume: bool = False) -> dict:
    """DeepSpeed ZeRO ``stage`` on CPU (DS_ACCELERATOR=cpu, gloo)."""
    strategy = dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=stage))
    return train(work_dir, max_epochs, strategy, resume)


def train_deepspeed_in(env: dict[str, str], work_dir: str, max_epochs: int, stage: int,
                       resume: bool = False) -> dict:  # fmt: skip
    """:func:`train_deepspeed` with ``env`` set first (a storage endpoint, a staging folder)."""
    os.environ.update(env)
    return train_deepspeed(work_dir, max_epochs, stage, resume)


def train_ddp_compressed(work_dir: str, max_epochs: int) -> dict[str, Any]:
    """DDP with fp16 gradient compression, accumulation over 2 steps and clipping."""
    _register_toys()
    return train(
        work_dir,
        max_epochs,
        dict(type="DDPStrategy", comm_hook="fp16_compress"),
        False,
        optim_wrapper=dict(
            optimizer=dict(type="SGD", lr=0.1), accumulative_counts=2, clip_grad=dict(max_norm=1.0)
        ),
    )


def train_fsdp_accumulated(work_dir: str, max_epochs: int) -> dict[str, Any]:
    """FSDP with accumulation over 2 steps and clipping by norm."""
    strategy = dict(type="FSDPStrategy", wrap_policy=["Linear"])
    return train(
        work_dir,
        max_epochs,
        strategy,
        False,
        optim_wrapper=dict(
            optimizer=dict(type="SGD", lr=0.1), accumulative_counts=2, clip_grad=dict(max_norm=1.0)
        ),
    )


def deepspeed_param_groups(work_dir: str) -> list[tuple[float, float, int]]:
    """ZeRO-1 with ``paramwise_cfg`` (no decay on biases): (lr, weight_decay, numel) of
    every group of the optimizer the engine steps, after one epoch of training."""
    _register_toys()
    from cadence.config import Config
    from cadence.runner import Runner

    strategy = dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=1))
    cfg = config(work_dir, 8, 1, strategy, launcher="pytorch")
    cfg["optim_wrapper"] = dict(
        optimizer=dict(type="SGD", lr=0.1, weight_decay=0.01),
        paramwise_cfg=dict(bias_decay_mult=0.0, custom_keys={"head": dict(lr_mult=0.5)}),
    )
    runner = Runner.from_cfg(Config(cfg))
    runner.train()
    groups = runner.optim_wrapper.param_groups  # the engine's (ZeRO) optimizer
    sizes = [sum(p.numel() for p in g["params"]) for g in groups]
    return [(g["lr"], g["weight_decay"], n) for g, n in zip(groups, sizes)]


def deepspeed_model_before_train(work_dir: str) -> dict[str, Any]:
    """ZeRO-2: read ``runner.model`` and validate before training, then train."""
    _register_toys()
    import torch

    from cadence.config import Config
    from cadence.runner import Runner

    strategy = dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=2))
    cfg = config(work_dir, 8, 1, strategy, launcher="pytorch")
    cfg["default_hooks"] = dict(checkpoint=dict(type="CheckpointHook", interval=0))
    runner = Runner.from_cfg(Config(cfg))
    model = runner.model  # an engine without optimizer (ZeRO-2 evaluates as stage 0)
    before = {k: v.clone() for k, v in runner.strategy.unwrap(model).state_dict().items()}
    evaluating_engine = runner.strategy.engine
    metrics = runner.val()
    runner.train()
    after = runner.strategy.model_state_dict(runner.model)
    return {
        "val_before_train": sorted(metrics),
        "new_engine": runner.strategy.engine is not evaluating_engine,
        "engine_optimizer": type(runner.strategy.engine.optimizer).__name__,
        "optim_wrapper": type(runner.optim_wrapper).__name__,
        "changed": sorted(k for k in before if not torch.equal(before[k], after[k])),
        "keys": sorted(before),
    }


def train_fsdp_in(env: dict[str, str], work_dir: str, max_epochs: int, resume: bool = False
                  ) -> dict[str, Any]:  # fmt: skip
    """:func:`train_fsdp` with ``env`` set first (a storage endpoint, a staging folder)."""
    os.environ.update(env)
    return train_fsdp(work_dir, max_epochs, resume)


def resave_interrupted(work_dir: str, strategy: dict) -> dict[str, Any]:
    """Train 2 epochs, change the weights, save ``epoch_2.pth`` again but fail once its
    companion folder is written (before it is swapped in), then save it again cleanly;
    report whether the old checkpoint still verified and resumed, and the new one after."""
    _register_toys()
    import types

    import torch

    from cadence.checkpoint import CheckpointError
    from cadence.config import Config
    from cadence.runner import Runner

    runner = Runner.from_cfg(Config(config(work_dir, 8, 2, strategy, launcher="pytorch")))
    runner.train()
    path = os.path.join(work_dir, "epoch_2.pth")
    steps = runner.strategy

    def weights() -> dict[str, Any]:
        state = steps.model_state_dict(runner.model)
        return {k: v.detach().cpu().clone() for k, v in state.items()}

    def shift() -> None:
        with torch.no_grad():
            for param in runner.model.parameters():
                param.add_(1.0)

    def verifies() -> bool | str:
        try:
            steps.verify_checkpoint(path)
        except (CheckpointError, FileNotFoundError) as e:
            return str(e)
        return True

    def same(a: dict[str, Any], b: dict[str, Any]) -> bool:
        return sorted(a) == sorted(b) and all(torch.equal(a[k], b[k]) for k in a)

    saved = weights()
    shift()

    def fail(self: Any, filename: str) -> Any:
        raise OSError("the disk went away after the companion folder was written")

    steps.companion_digests = types.MethodType(fail, steps)  # type: ignore[method-assign]
    try:
        runner.save_checkpoint(work_dir, "epoch_2.pth")
        failed = False
    except OSError:
        failed = True
    del steps.companion_digests
    report: dict[str, Any] = {"failed": failed, "old_verifies": verifies()}
    runner.resume(path)
    report["old_resumes"] = same(weights(), saved)
    shift()
    shifted = weights()
    runner.save_checkpoint(work_dir, "epoch_2.pth")
    report["new_verifies"] = verifies()
    shift()
    runner.resume(path)
    report["new_resumes"] = same(weights(), shifted)
    report["left"] = sorted(n for n in os.listdir(work_dir) if n.startswith("."))
    return report
