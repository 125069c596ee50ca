"""EmptyCacheHook: empties the CUDA cache exactly at the enabled points."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from cadence.hooks import EmptyCacheHook
from cadence.registry import HOOKS
from cadence.runner import Runner
from cadence.runner.hook_manager import HookManager


@pytest.fixture
def calls(monkeypatch):
    counted: list[int] = []
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: counted.append(1))
    return counted


def test_only_enabled_points_are_registered():
    assert EmptyCacheHook().implemented_stages() == [
        "after_train_epoch", "after_val_epoch", "after_test_epoch",
    ]  # fmt: skip
    both = EmptyCacheHook(before_epoch=True, after_epoch=False, after_iter=True)
    assert both.implemented_stages() == [
        "before_train_epoch", "after_train_iter", "before_val_epoch", "after_val_iter",
        "before_test_epoch", "after_test_iter",
    ]  # fmt: skip
    manager = HookManager()
    manager.register(EmptyCacheHook())
    assert "after_train_iter" not in manager.describe()


def test_calls_counted_over_a_short_run(tmp_path, calls):
    data = TensorDataset(torch.randn(12, 3), torch.randn(12, 1))

    class Reg(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 1)

        def forward(self, x, y, mode="tensor"):
            out = self.fc(x)
            if mode == "loss":
                return {"loss": ((out - y) ** 2).mean()}
            return out

    runner = Runner(
        model=Reg(),
        work_dir=str(tmp_path),
        train_dataloader=DataLoader(data, batch_size=4),
        train_cfg=dict(max_epochs=2),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        custom_hooks=[dict(type="EmptyCacheHook", before_epoch=True, after_iter=True)],
        default_hooks=dict(checkpoint=None),
    )
    runner.train()
    # 2 epochs x (before + after) + 2 x 3 iterations
    assert len(calls) == 2 * 2 + 2 * 3


def test_stages_call_empty_cache(calls):
    hook = HOOKS.build(dict(type="EmptyCacheHook", before_epoch=True, after_iter=True))
    hook.before_val_epoch(None)
    hook.after_test_epoch(None, metrics={})
    hook.after_val_iter(None, batch_idx=0)
    assert len(calls) == 3


def test_harmless_without_cuda():
    EmptyCacheHook().after_train_epoch(None)  # CUDA never initialized here: nothing to free
