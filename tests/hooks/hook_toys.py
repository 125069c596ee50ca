"""A tiny regression problem that the hook tests train through the Runner."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.runner import Runner


class Ramp(Dataset):
    """``n`` samples: inputs ``(i, i)``, target ``i``."""

    def __init__(self, n: int = 8) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        return {"inputs": torch.full((2,), float(i)), "data_samples": torch.tensor(float(i))}


class Line(BaseModel):
    """One linear unit with a (scaled) MSE loss; predictions are the outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        out = self.fc(inputs).squeeze(-1)
        if mode == "loss":
            return {"loss": F.mse_loss(out, data_samples) * 1e-3}
        return list(out)


class SignalAt(Hook):
    """Sends ``signum`` to this process before iteration ``at``; counts the iterations run."""

    priority = "HIGHEST"

    def __init__(self, at: int, signum: int) -> None:
        self.at, self.signum, self.iters = at, signum, 0

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        if runner.iter == self.at:
            os.kill(os.getpid(), self.signum)

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        self.iters += 1


def make_runner(work_dir: Any, accumulate: int = 1, **train_cfg: Any) -> Runner:
    """A run of :class:`Line` on 12 :class:`Ramp` samples (3 epochs of 6 iterations by
    default); the two must be registered."""
    return Runner(
        model=dict(type="Line"),
        work_dir=str(work_dir),
        train_dataloader=dict(
            batch_size=2, dataset=dict(type="Ramp", n=12), sampler=dict(type="DefaultSampler"),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=train_cfg or dict(by_epoch=True, max_epochs=3),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01), accumulative_counts=accumulate),
        default_hooks=dict(logger=dict(type="LoggerHook", progress="off")),
        log_level="WARNING",
        randomness=dict(seed=0),
    )  # fmt: skip


def fake_scontrol(folder: Path, exit_code: int = 0) -> tuple[str, Path]:
    """A stand-in for SLURM's ``scontrol`` in ``folder/bin`` that appends its arguments, one
    call a line, to ``folder/scontrol.calls`` and exits ``exit_code``; returns the ``PATH``
    that finds it first and the calls file."""
    calls = folder / "scontrol.calls"
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    script = bin_dir / "scontrol"
    script.write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\n'
                      + ('echo "scontrol: error: refused" >&2\n' if exit_code else "")
                      + f"exit {exit_code}\n")  # fmt: skip
    script.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", calls
