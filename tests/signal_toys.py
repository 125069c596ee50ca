"""What the signal tests' ``cadence train`` processes import (``custom_imports``).

Every process of a run (the ranks and their dataloader workers) writes marker
files into a folder the test names, so that the test synchronises on what the
run did instead of sleeping: ``pid.<role>.<pid>`` when a process starts and
``rank<r>.iter<n>`` when rank ``r`` finishes iteration ``n``.
"""

from __future__ import annotations

import os
import time
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.registry import DATASETS, HOOKS, MODELS


def touch(folder: str, name: str) -> None:
    """Create the empty marker file ``folder/name``."""
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w"):
        pass


@DATASETS.register_module()
class MarkedRamp(Dataset):
    """``n`` samples ``(i, i) -> i``; each process that loads one marks its pid once."""

    def __init__(self, marks: str, n: int = 64) -> None:
        self.marks, self.n = marks, n
        self._marked_in: int | None = None

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int) -> dict[str, Any]:
        if self._marked_in != os.getpid():
            self._marked_in = os.getpid()
            touch(self.marks, f"pid.loader.{os.getpid()}")
        return {"inputs": torch.full((2,), float(i)), "data_samples": torch.tensor(float(i))}


@MODELS.register_module()
class TinyLine(BaseModel):
    """One linear unit with an MSE loss."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(2, 1)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        out = self.fc(inputs).squeeze(-1)
        if mode == "loss":
            return {"loss": F.mse_loss(out, data_samples) * 1e-3}
        return list(out)


@HOOKS.register_module()
class Pace(Hook):
    """Marks this rank's pid, then each finished iteration; ``delay`` seconds per iteration."""

    def __init__(self, marks: str, delay: float = 0.05) -> None:
        self.marks, self.delay = marks, delay

    def before_train(self, runner: Any) -> None:
        touch(self.marks, f"pid.rank{runner.rank}.{os.getpid()}")

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        time.sleep(self.delay)
        touch(self.marks, f"rank{runner.rank}.iter{runner.iter + 1}")


@HOOKS.register_module()
class StallAt(Hook):
    """Rank ``rank`` stops making progress after iteration ``at`` (a stuck peer or loader).

    ``priority`` above the preemption hook's, so that a rank stalls before it
    could reach the iteration boundary where the preemption checkpoint is taken.
    """

    priority = "HIGH"

    def __init__(self, marks: str, at: int, rank: int = 0, attempt: int | None = None) -> None:
        self.marks, self.at, self.rank = marks, at, rank
        #: stall only in this attempt of a job torchrun restarts (TORCHELASTIC_RESTART_COUNT)
        self.attempt = attempt

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        restarts = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
        if self.attempt is not None and restarts != self.attempt:
            return
        if runner.rank == self.rank and runner.iter + 1 == self.at:
            touch(self.marks, f"stalled.rank{runner.rank}")
            while True:
                time.sleep(0.5)


@HOOKS.register_module()
class SlowState(Hook):
    """A hook whose state takes ``seconds`` to collect, so that a save lasts that long.

    It marks ``saving`` when a save asks for its state; saves before iteration
    ``after`` are quick (the interval checkpoints a test wants to keep).
    """

    def __init__(self, marks: str, seconds: float = 60.0, after: int = 0) -> None:
        self.marks, self.seconds, self.after = marks, seconds, after
        self.iter = 0

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        self.iter = runner.iter + 1

    def state_dict(self) -> dict[str, Any]:
        if self.iter > self.after:
            touch(self.marks, "saving")
            time.sleep(self.seconds)
        return {"iter": self.iter}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.iter = state["iter"]
