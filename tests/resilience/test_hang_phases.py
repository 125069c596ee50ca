"""A rank stuck in any phase of a step is named, with that phase, as the rank behind.

Two gloo ranks train a tiny DDP model under the real runner with
``hang_timeout=1``; rank 1 stalls in one place (a dataset read, a hook, the
forward or backward pass, the optimizer step, a validation batch, a checkpoint
save) while rank 0 runs on until it waits for rank 1 in a collective. Both
ranks' watchdogs report and end the processes with code 3; the test reads
what each rank wrote to its stderr.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.dist.testing import run_distributed
from cadence.hooks import Hook
from cadence.model import BaseModel

_SEEN: dict[str, int] = {}


def _stall(where: str, stall: str, at: int = 3) -> None:
    """On rank 1, sleep for good the ``at``-th time ``where`` runs when it is ``stall``."""
    if where != stall or int(os.environ["RANK"]) != 1:
        return
    _SEEN[where] = _SEEN.get(where, 0) + 1
    while _SEEN[where] >= at:
        time.sleep(0.05)


class Rows(Dataset):
    """Four classes of one-hot rows; reading a row of the third batch stalls in 'data'."""

    def __init__(self, stall: str = "", n: int = 16) -> None:
        self.stall, self.n = stall, n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: int) -> dict[str, Any]:
        if index >= 8:  # rank 1's third batch (no shuffling: rows 9 and 11)
            _stall("data", self.stall, at=1)
        return {"inputs": F.one_hot(torch.tensor(index % 4), 4).float(),
                "data_samples": torch.tensor(index % 4)}  # fmt: skip


class _SlowBackward(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, stall: str) -> torch.Tensor:
        ctx.stall = stall
        return x.clone()

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        _stall("backward", ctx.stall)
        return grad, None


class Line(BaseModel):
    """One linear layer (no buffers: DDP's forward does no collective after the second
    iteration's, where it rebuilds its buckets)."""

    def __init__(self, stall: str = "") -> None:
        super().__init__()
        self.stall = stall
        self.line = nn.Linear(4, 4)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        _stall("forward" if mode == "loss" else "val", self.stall, at=3 if mode == "loss" else 1)
        logits = _SlowBackward.apply(self.line(inputs), self.stall)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(logits, data_samples)]


class SlowSGD(torch.optim.SGD):
    def __init__(self, params: Any, lr: float, stall: str = "") -> None:
        super().__init__(params, lr=lr)
        self.stall = stall

    def step(self, closure: Any = None) -> Any:
        _stall("optimizer", self.stall)
        return super().step(closure)


class Stuck(Hook):
    """Stalls in ``before_train_iter`` (stall 'hook') or when a checkpoint takes its state
    (stall 'save')."""

    def __init__(self, stall: str = "") -> None:
        self.stall = stall

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        _stall("hook", self.stall)

    def state_dict(self) -> dict[str, Any]:
        _stall("save", self.stall, at=1)
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


def _train(work_dir: str, stall: str) -> None:
    from cadence.config import Config
    from cadence.registry import DATASETS, HOOKS, MODELS, OPTIMIZERS
    from cadence.runner import Runner

    for registry, module in ((DATASETS, Rows), (MODELS, Line), (OPTIMIZERS, SlowSGD),
                             (HOOKS, Stuck)):  # fmt: skip
        registry.register_module(module=module, force=True)
    err = os.open(os.path.join(work_dir, f"stderr.{os.environ['RANK']}"),
                  os.O_WRONLY | os.O_CREAT)  # fmt: skip
    os.dup2(err, 2)  # the watchdog's report
    loader = dict(batch_size=2, dataset=dict(type="Rows", stall=stall),
                  sampler=dict(type="DefaultSampler", shuffle=False),
                  collate_fn=dict(type="default_collate"))  # fmt: skip
    cfg = dict(
        model=dict(type="Line", stall=stall), work_dir=work_dir, train_dataloader=loader,
        train_cfg=dict(by_epoch=False, max_iters=8, val_interval=2),
        val_dataloader={**loader, "dataset": dict(type="Rows", n=8)}, val_cfg=dict(),
        val_evaluator=dict(type="Accuracy", topk=(1,)),
        optim_wrapper=dict(optimizer=dict(type="SlowSGD", lr=0.1, stall=stall)),
        default_hooks=dict(logger=dict(type="LoggerHook", progress="off"),
                           checkpoint=dict(type="CheckpointHook", by_epoch=False, interval=2)),
        custom_hooks=[dict(type="Stuck", stall=stall)], strategy=dict(type="DDPStrategy"),
        env_cfg=dict(dist_cfg=dict(hang_timeout=1)),
    )  # fmt: skip
    Runner.from_cfg(Config(cfg)).train()


BACKWARD_DONE = "backward pass done, waiting for the gradients' all-reduce"
#: stall -> (where rank 1 is, where rank 0 waits for it)
REPORTS = {
    "data": ("waiting for the data of iteration 3", f"in iteration 3, {BACKWARD_DONE}"),
    "hook": ("in iteration 3, in hook Stuck.before_train_iter", f"in iteration 3, {BACKWARD_DONE}"),
    "forward": ("in iteration 3, forward pass", f"in iteration 3, {BACKWARD_DONE}"),
    "backward": ("in iteration 3, backward pass", f"in iteration 3, {BACKWARD_DONE}"),
    "optimizer": ("in iteration 3, optimizer step", f"in iteration 4, {BACKWARD_DONE}"),
    "val": ("in validation batch 1, forward pass (val_step)",
            "after validation batch 2, computing the metrics, waiting for the other ranks in "
            "all_gather_object"),
    "save": ("in iteration 2, in hook CheckpointHook.after_train_iter, saving a checkpoint",
             "in iteration 2, in hook CheckpointHook.after_train_iter, saving a checkpoint, "
             "waiting for the other ranks in all_gather_object"),
}  # fmt: skip


@pytest.mark.dist
@pytest.mark.parametrize("stall", list(REPORTS))
def test_the_rank_stuck_in_a_phase_is_named_behind_with_its_phase(tmp_path, stall):
    """Before: 'No rank is behind the others: ranks 0-1 in iteration 2' for a stall inside a
    step, and no report at all for one inside a checkpoint save (every rank busy)."""
    with pytest.raises(RuntimeError, match="exit code 3"):
        run_distributed(_train, str(tmp_path), stall, timeout=60)
    behind, ahead = REPORTS[stall]
    for rank in (0, 1):
        err = (tmp_path / f"stderr.{rank}").read_text()
        said = re.search(rf"cadence \(rank {rank} of 2, [^\n]*", err)
        assert said, err[-3000:]
        line = said.group(0)
        expected = (rf"Behind: rank 1 \(host \S+, pid \d+\) {re.escape(behind)}\. "
                    rf"Ahead of it: rank 0 \(host \S+, pid \d+\) {re.escape(ahead)}\.")  # fmt: skip
        assert re.search(expected, line), line
        assert f"This rank is {behind if rank else ahead};" in line
        limit = 1.0  # hang_timeout; busy together: BUSY_FACTOR x hang_timeout
        if stall == "save":
            assert "every rank has been busy (saving a checkpoint) for" in line
            limit = 3.0
        silent = float(re.search(r" for ([\d.]+) s \(", line).group(1))
        assert limit <= silent < limit + 2, line
