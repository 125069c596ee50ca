"""CheckInvalidLossHook: the error names the iteration and the NaN/Inf loss terms."""

from __future__ import annotations

import math
import re

import pytest
import torch
from runner_double import StandInRunner
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from cadence.dist.testing import run_distributed
from cadence.hooks import CheckInvalidLossHook, InvalidLossError
from cadence.hooks.check_invalid_loss_hook import invalid_terms
from cadence.registry import HOOKS
from cadence.runner import Runner


class GoesNaN(nn.Module):
    """Its ``loss_bbox`` term is NaN from the ``nan_from``-th training step (counting from 1)."""

    def __init__(self, nan_from: int) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 1)
        self.nan_from = nan_from
        self.calls = 0

    def forward(self, x, y, mode="tensor"):
        out = self.fc(x)
        if mode != "loss":
            return out
        self.calls += 1
        bbox = out.abs().mean() * 0.1
        if self.calls >= self.nan_from:
            bbox = bbox * math.nan
        return {"loss_cls": ((out - y) ** 2).mean(), "loss_bbox": bbox}


def train(tmp_path, nan_from: int, interval: int) -> Runner:
    data = TensorDataset(torch.randn(32, 3), torch.randn(32, 1))
    runner = Runner(
        model=GoesNaN(nan_from),
        work_dir=str(tmp_path),
        train_dataloader=DataLoader(data, batch_size=4),  # 8 iterations per epoch
        train_cfg=dict(max_epochs=2),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        custom_hooks=[dict(type="CheckInvalidLossHook", interval=interval)],
        default_hooks=dict(checkpoint=None),
    )
    runner.train()
    return runner


def test_every_iteration_check_names_the_iteration_and_term(tmp_path):
    with pytest.raises(InvalidLossError) as info:
        train(tmp_path, nan_from=11, interval=1)
    assert isinstance(info.value, FloatingPointError)  # what detectron2 raises
    message = str(info.value)
    assert "iteration 11 " in message and "epoch 2, batch 2" in message
    head, loss_dict = message.split("\n")
    assert "loss_bbox=nan" in head and "loss=nan" in head
    assert "loss_cls" not in head  # still finite at the failing step: not blamed
    # ... but the whole loss dict is there, every term with its value
    match = re.fullmatch(r"loss dict \(rank 0\): \{(.*)\}", loss_dict)
    assert match is not None, loss_dict
    entries = dict(item.split(": ") for item in match.group(1).split(", "))
    assert set(entries) == {"loss_cls", "loss_bbox", "loss"}
    assert entries["loss_bbox"] == "nan" and entries["loss"] == "nan"
    assert math.isfinite(float(entries["loss_cls"])) and float(entries["loss_cls"]) > 0


def test_message_lists_every_entry_with_its_value():
    runner = StandInRunner(iter=41, epoch=3, rank=0)
    outputs = {
        "loss_cls": torch.tensor(0.25),
        "loss_box": torch.tensor([math.inf, 1.0]),
        "acc": torch.tensor(87.5),
        "loss": torch.tensor(math.inf),
    }
    with pytest.raises(FloatingPointError) as info:
        CheckInvalidLossHook(interval=1).after_train_iter(runner, 5, outputs=outputs)
    message = str(info.value)
    assert message.startswith("loss became NaN or infinite at iteration 42 (epoch 4, batch 5)")
    assert message.endswith(
        "loss dict (rank 0): {loss_cls: 0.25, loss_box: inf (mean of shape (2,)), "
        "acc: 87.5, loss: inf}"
    )


def test_interval_checks_only_every_nth_iteration(tmp_path):
    # NaN from step 2, but the first check is after step 4
    with pytest.raises(InvalidLossError, match="iteration 4 "):
        train(tmp_path, nan_from=2, interval=4)


def test_finite_losses_pass_and_other_entries_are_ignored():
    hook = HOOKS.build(dict(type="CheckInvalidLossHook", interval=1))
    runner = StandInRunner(iter=6, epoch=0)
    finite = {"loss": torch.tensor(1.0), "loss_x": torch.tensor([1.0, 2.0]), "grad_norm": math.inf}
    hook.after_train_iter(runner, batch_idx=6, outputs=finite)
    bad = {"loss": torch.tensor(math.inf), "acc": torch.tensor(math.nan)}
    assert [k for k, _ in invalid_terms(bad)] == ["loss"]
    with pytest.raises(InvalidLossError, match=r"iteration 7 .*loss=inf"):
        hook.after_train_iter(runner, batch_idx=6, outputs=bad)


def _check_on_each_rank() -> str:
    rank = torch.distributed.get_rank()
    loss = torch.tensor(math.nan if rank == 1 else 0.5)
    runner = StandInRunner(iter=2, epoch=0, rank=rank)
    try:
        CheckInvalidLossHook(interval=1).after_train_iter(runner, 2, outputs={"loss": loss})
    except InvalidLossError as exc:
        return str(exc)
    return "no error"


@pytest.mark.dist
def test_every_rank_stops_when_one_rank_has_an_invalid_loss():
    rank0, rank1 = run_distributed(_check_on_each_rank, world_size=2, timeout=30)
    assert "iteration 3 " in rank0 and "on another rank (rank 0 is finite)" in rank0
    assert "loss dict (rank 0): {loss: 0.5}" in rank0
    assert "iteration 3 " in rank1 and "loss=nan" in rank1


def test_interval_is_checked():
    with pytest.raises(ValueError, match="interval"):
        CheckInvalidLossHook(interval=0)
    assert CheckInvalidLossHook().interval == 50
