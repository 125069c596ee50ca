"""The child-process side of the resume contract tests (tests/runner/test_resume_contract.py).

Run as ``python -c "import resume_contract_case as c; c.main()" SPEC.json`` with
this folder on ``PYTHONPATH``. ``SPEC['phase']`` is

* ``'full_then_kill'``: train the config without interruption (work dir
  ``full``) and write its final state to ``full_rank<r>.pt``; then train it
  again (work dir ``part``) and kill the process (every rank) with SIGKILL
  just before iteration ``SPEC['kill_at']``;
* ``'resume'``: train again in ``part`` with ``resume=True`` and write the
  final state to ``resumed_rank<r>.pt``.

The toy data draws its augmentation from torch's, NumPy's and Python's global
generators, the model has dropout and BatchNorm, so a resumed run that loads
a sample twice, restarts an epoch or forgets a random stream ends with other
weights. Each ``__getitem__`` appends the index to a fetch log so the test can
count what a run loaded.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.registry import DATASETS, HOOKS, MODELS

DIM, CLASSES = 6, 3


class NoisyPoints(Dataset):
    """Points around class centres, jittered on every load from three global generators."""

    def __init__(self, n: int = 24, seed: int = 0, fetch_log: str | None = None) -> None:
        g = torch.Generator().manual_seed(seed)
        self.labels = torch.randint(0, CLASSES, (n,), generator=g)
        centres = torch.randn(CLASSES, DIM, generator=torch.Generator().manual_seed(99)) * 2
        self.points = centres[self.labels] + 0.5 * torch.randn(n, DIM, generator=g)
        self.fetch_log = fetch_log
        self.metainfo = {"classes": [str(c) for c in range(CLASSES)]}

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        if self.fetch_log:
            with open(self.fetch_log, "a") as log:
                log.write(f"{int(index)}\n")
        jitter = 0.3 * torch.randn(DIM)
        jitter[0] += float(np.random.uniform(-0.2, 0.2)) + random.gauss(0.0, 0.2)
        return {
            "inputs": self.points[index] + jitter,
            "data_samples": self.labels[index],
            "index": int(index),
        }


class DropoutNet(BaseModel):
    """Linear - BatchNorm (optional) - ReLU - Dropout - Linear classifier (cadence contract)."""

    def __init__(
        self, hidden: int = 16, batchnorm: bool = True, data_preprocessor: Any = None
    ) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        norm = nn.BatchNorm1d(hidden) if batchnorm else nn.Identity()
        self.body = nn.Sequential(nn.Linear(DIM, hidden), norm, nn.ReLU(), nn.Dropout(0.3))
        self.head = nn.Linear(hidden, CLASSES)

    def forward(
        self, inputs: Any, data_samples: Any = None, mode: str = "tensor", index: Any = None
    ) -> Any:
        x = torch.stack(list(inputs)) if isinstance(inputs, (list, tuple)) else inputs
        logits = self.head(self.body(x.float()))
        if mode == "tensor":
            return logits
        labels = torch.as_tensor(data_samples).reshape(-1)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits.float(), labels)}
        scores = logits.float().softmax(dim=-1)
        return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(scores, labels)]


class KillAt(Hook):
    """SIGKILL this process just before iteration ``iteration`` (after a marker file)."""

    priority = "HIGHEST"

    def __init__(self, iteration: int, marker: str) -> None:
        self.iteration = iteration
        self.marker = marker

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        if runner.iter == self.iteration:
            with open(f"{self.marker}_rank{runner.rank}", "w") as f:
                f.write(str(runner.iter))
            os.kill(os.getpid(), signal.SIGKILL)


class BatchRecorder(Hook):
    """Remembers the iteration a run starts (or resumes) at and every batch it trains on."""

    def __init__(self) -> None:
        self.start_iter = -1
        self.indices: list[list[int]] = []
        self.inputs: list[torch.Tensor] = []

    def before_train(self, runner: Any) -> None:
        self.start_iter = runner.iter

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        self.indices.append(data_batch["index"].tolist())
        self.inputs.append(data_batch["inputs"].clone())


STRATEGIES: dict[str, dict[str, Any]] = {
    "ddp": dict(type="DDPStrategy"),
    "fsdp": dict(type="FSDPStrategy", wrap_policy=["Linear"]),
    "deepspeed": dict(type="DeepSpeedStrategy", zero_optimization=dict(stage=2)),
}


def _register() -> None:
    DATASETS.register_module(module=NoisyPoints, force=True)
    MODELS.register_module(module=DropoutNet, force=True)
    HOOKS.register_module(module=KillAt, force=True)


def build_cfg(spec: dict[str, Any], work_dir: str, fetch_log: str, **extra: Any) -> dict[str, Any]:
    """The run's config from the case description ``spec`` (see the test module)."""
    loader: dict[str, Any] = dict(
        batch_size=spec.get("batch_size", 4),
        num_workers=spec.get("workers", 0),
        persistent_workers=spec.get("persistent", False),
        dataset=dict(type="NoisyPoints", n=spec.get("n", 24), fetch_log=fetch_log),
        sampler=dict(type=spec.get("sampler", "DefaultSampler"), shuffle=True),
        collate_fn=dict(type="default_collate"),
    )
    by_epoch = spec["loop"] == "epoch"
    if by_epoch:
        train_cfg: dict[str, Any] = dict(type="EpochBasedTrainLoop", max_epochs=spec["length"])
    else:
        train_cfg = dict(type="IterBasedTrainLoop", max_iters=spec["length"])
    optim: dict[str, Any] = dict(
        optimizer=dict(type="SGD", lr=0.1, momentum=0.9, weight_decay=1e-4),
        accumulative_counts=spec.get("accum", 1),
    )
    if spec.get("amp"):
        optim.update(type="AmpOptimWrapper", dtype=spec["amp"])
        if spec["amp"] == "float16":
            optim["loss_scale"] = dict(init_scale=2.0**8, growth_interval=3)
    schedulers = [
        dict(type="LinearLR", start_factor=0.3, by_epoch=False, begin=0, end=5),
        dict(type="MultiStepLR", by_epoch=by_epoch, milestones=[2] if by_epoch else [11],
             gamma=0.5),
    ]  # fmt: skip
    checkpoint = dict(
        type="CheckpointHook",
        interval=spec["ckpt_interval"],
        by_epoch=spec.get("ckpt_by_epoch", False),
        save_best="auto" if spec.get("val") else None,
    )
    cfg: dict[str, Any] = dict(
        model=dict(type="DropoutNet", batchnorm=spec.get("batchnorm", True)),
        work_dir=work_dir,
        train_dataloader=loader,
        train_cfg=train_cfg,
        optim_wrapper=optim,
        param_scheduler=schedulers,
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=1, progress="off"), checkpoint=checkpoint
        ),
        log_processor=dict(by_epoch=by_epoch, window_size=1),
        randomness=dict(seed=spec.get("seed", 7), diff_rank_seed=spec.get("ddp", False)),
        custom_hooks=[],
        log_level="WARNING",
    )
    if spec.get("val"):
        cfg.update(
            val_dataloader=dict(
                batch_size=8,
                num_workers=spec.get("workers", 0),
                dataset=dict(type="NoisyPoints", n=16, seed=1),
                sampler=dict(type="DefaultSampler", shuffle=False),
                collate_fn=dict(type="default_collate"),
            ),
            val_cfg=dict(),
            val_evaluator=dict(type="Accuracy"),
        )
        train_cfg["val_interval"] = spec.get("val_interval", 1)
        cfg["custom_hooks"].append(
            dict(type="EarlyStoppingHook", monitor="accuracy/top1", min_delta=100.0,
                 patience=spec.get("patience", 3))
        )  # fmt: skip
    if spec.get("ema"):
        cfg["custom_hooks"].append(dict(type="EMAHook", momentum=0.2))
    if spec.get("ddp"):
        strategy = spec.get("strategy_cfg") or STRATEGIES[spec.get("strategy", "ddp")]
        cfg.update(launcher="pytorch", strategy=strategy)
    cfg.update(extra)
    return cfg


def _scalar_log(runner: Any) -> list[dict[str, Any]]:
    path = os.path.join(runner.log_dir, "vis_data", "scalars.json")
    if not os.path.isfile(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def _hub_history(hub: Any) -> dict[str, Any]:
    """Every logged scalar's full history except timings (they differ from run to run)."""
    history = {}
    for key, buffer in hub.log_scalars.items():
        if "time" in key or key.endswith("eta") or "memory" in key:
            continue
        values, counts = buffer.data
        history[key] = (torch.as_tensor(values).tolist(), torch.as_tensor(counts).tolist())
    return history


def _plain(value: Any) -> Any:
    """Tensors (a sharded DTensor: this rank's shard) as CPU copies, containers recursively."""
    if isinstance(value, torch.Tensor):
        local = getattr(value, "to_local", None)
        tensor = local() if callable(local) else value
        return tensor.detach().cpu().clone()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def snapshot(runner: Any, batches: BatchRecorder) -> dict[str, Any]:
    """The final state of a run, in plain types, for bitwise comparison."""
    hooks: dict[str, Any] = {}
    for hook in runner.hooks:
        name = type(hook).__name__
        if name == "EarlyStoppingHook":
            hooks[name] = hook.state_dict()
        elif name == "CheckpointHook":
            hooks[name] = {"best_scores": dict(hook.best_scores)}
        elif name == "EMAHook":
            hooks[name] = {k: v.detach().clone() for k, v in hook.ema_model.state_dict().items()}
    schedulers = runner.param_schedulers or []
    np_state = np.random.get_state()
    return {
        # full weights (rank 0 if sharded)
        "model": _plain(runner.strategy.model_state_dict(runner.model)),
        "optimizer": _plain(runner.strategy.optim_state_dict(runner.optim_wrapper)),
        "schedulers": [s.state_dict() for s in schedulers],
        "hub": _hub_history(runner.message_hub),
        "hooks": hooks,
        "position": {"epoch": runner.epoch, "iter": runner.iter},
        "start_iter": batches.start_iter,
        "indices": batches.indices,
        "inputs": batches.inputs,
        "rng": {
            "torch": torch.get_rng_state(),
            "numpy": (np_state[1].tolist(), int(np_state[2])),
            "python": list(random.getstate()[1]),
        },
        "scalars": _scalar_log(runner),
    }


def train(spec: dict[str, Any], run: str, **extra: Any) -> None:
    """Train one run (``full``, ``part`` or ``resumed``) and save its snapshot."""
    from cadence.runner import Runner

    _register()
    out = spec["out"]
    work = "full" if run == "full" else "part"
    rank = int(os.environ.get("RANK", "0"))
    cfg = build_cfg(
        spec, os.path.join(out, work), os.path.join(out, f"fetch_{run}_rank{rank}.log"), **extra
    )
    cfg["experiment_name"] = f"{run}_{rank}"
    runner = Runner.from_cfg(cfg)
    batches = BatchRecorder()
    runner.register_hook(batches)
    if run == "part":
        runner.register_hook(KillAt(spec["kill_at"], os.path.join(out, "killed")))
    runner.train()
    torch.save(snapshot(runner, batches), os.path.join(out, f"{run}_rank{rank}.pt"))


def _rank_main(spec: dict[str, Any], run: str, extra: dict[str, Any]) -> None:
    train(spec, run, **extra)


def main() -> None:
    """Entry point of the child process: ``SPEC.json`` is the last argument."""
    with open(sys.argv[-1]) as f:
        spec = json.load(f)
    torch.set_num_threads(1)
    runs = ["full", "part"] if spec["phase"] == "full_then_kill" else ["resumed"]
    for run in runs:
        extra = {"resume": True} if run == "resumed" else {}
        if spec.get("ddp"):
            from cadence.dist.testing import run_distributed

            if spec.get("strategy") == "deepspeed":
                import deepspeed  # noqa: F401  (then the ranks' fork server preloads it)

            run_distributed(_rank_main, spec, run, extra, world_size=2, timeout=120)
        else:
            train(spec, run, **extra)
