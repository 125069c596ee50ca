"""The run's save and resume route: the hooks' edits of a checkpoint reach the file and the
restored run, and a resume=True search shows the hooks only what it restores."""

from __future__ import annotations

import os
from typing import Any

import pytest
import torch
from damage import flip_a_byte
from runner_toys import toy_config

from cadence.checkpoint import safe_torch_load
from cadence.hooks import Hook
from cadence.runner import Runner


class Edits(Hook):
    """Adds to every checkpoint saved, and rewrites the head's bias of every one loaded."""

    def __init__(self, bias: float | None = None) -> None:
        self.bias = bias
        self.loaded: list[Any] = []
        self.start: dict[str, Any] = {}

    def before_train(self, runner: Any) -> None:
        model = runner.model
        self.start = dict(epoch=runner.epoch, bias=model.head.bias.detach().clone())

    def before_save_checkpoint(self, runner: Any, checkpoint: dict[str, Any]) -> None:
        checkpoint["meta"]["note"] = f"epoch {runner.epoch}"
        checkpoint["from_hook"] = torch.arange(3)

    def after_load_checkpoint(self, runner: Any, checkpoint: dict[str, Any]) -> None:
        self.loaded.append(checkpoint["meta"]["epoch"])
        if self.bias is not None:
            checkpoint["state_dict"]["head.bias"].fill_(self.bias)


def run(work_dir: Any, hook: Edits, max_epochs: int = 2, **overrides: Any) -> Edits:
    runner = Runner.from_cfg(toy_config(work_dir, max_epochs=max_epochs, **overrides))
    runner.register_hook(hook)
    runner.train()
    return hook


@pytest.mark.parametrize("async_save", [False, True])
def test_before_save_checkpoint_edits_reach_the_file(tmp_path, async_save):
    hooks = dict(checkpoint=dict(type="CheckpointHook", interval=1, async_save=async_save))
    run(tmp_path, Edits(), default_hooks=hooks)
    for epoch in (1, 2):
        saved = safe_torch_load(os.path.join(tmp_path, f"epoch_{epoch}.pth"))
        assert saved["meta"]["note"] == f"epoch {epoch - 1}"
        assert torch.equal(saved["from_hook"], torch.arange(3))
        assert saved["meta"]["epoch"] == epoch


def test_after_load_checkpoint_edits_reach_the_resumed_run(tmp_path):
    run(tmp_path, Edits(), max_epochs=1)
    hook = run(tmp_path, Edits(bias=0.25), max_epochs=1, resume=True)
    assert hook.loaded == [1]
    assert hook.start["epoch"] == 1
    assert torch.equal(hook.start["bias"], torch.full((4,), 0.25))


def test_after_load_checkpoint_edits_reach_weights_loaded_with_load_from(tmp_path):
    run(tmp_path / "a", Edits(), max_epochs=1)
    source = str(tmp_path / "a" / "epoch_1.pth")
    hook = run(tmp_path / "b", Edits(bias=-1.5), max_epochs=1, load_from=source)
    assert hook.loaded == [1]
    assert hook.start["epoch"] == 0  # weights only: the position stays
    assert torch.equal(hook.start["bias"], torch.full((4,), -1.5))


def test_resume_search_shows_the_hooks_only_the_checkpoint_it_restores(tmp_path):
    run(tmp_path, Edits(), max_epochs=2)
    flip_a_byte(tmp_path / "epoch_2.pth")  # damaged: fails verification before any hook sees it
    hook = run(tmp_path, Edits(), max_epochs=2, resume=True)
    assert hook.loaded == [1]
    assert hook.start["epoch"] == 1
