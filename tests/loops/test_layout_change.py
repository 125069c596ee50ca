"""A run resumed with another per-process batch size (in one process: the layout changes as
it does with another world size) continues the shared sample order from the samples the
saved run had consumed, in every loop and sampler, and says what changed.

(Other world sizes with every strategy: tests/strategies/test_reshard.py.)
"""

from __future__ import annotations

import os
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.hooks import Hook
from cadence.model import BaseModel
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner


class Numbered(Dataset):
    """16 points whose last input column is the sample's index (the model ignores it)."""

    def __init__(self) -> None:
        g = torch.Generator().manual_seed(0)
        self.x, self.y = torch.randn(16, 4, generator=g), torch.randint(0, 2, (16,), generator=g)

    def __len__(self) -> int:
        return 16

    def __getitem__(self, i: int) -> dict[str, Any]:
        inputs = torch.cat([self.x[i], torch.tensor([float(i)])])
        return {"inputs": inputs, "data_samples": self.y[i]}


class Linear(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        logits = self.fc(inputs[:, :-1])
        return {"loss": F.cross_entropy(logits, data_samples)} if mode == "loss" else logits


@pytest.fixture(autouse=True)
def _toys() -> None:
    DATASETS.register_module(module=Numbered, force=True)
    MODELS.register_module(module=Linear, force=True)


class Seen(Hook):
    """The dataset indices of every step, with the batch index the loop gave it."""

    def __init__(self) -> None:
        self.indices: list[int] = []
        self.batch_idx: list[int] = []

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        self.indices.extend(int(i) for i in data_batch["inputs"][:, -1])
        self.batch_idx.append(batch_idx)


def run(work_dir: Any, batch_size: int, train_cfg: dict, sampler: str = "DefaultSampler",
        **overrides: Any) -> Seen:  # fmt: skip
    cfg: dict[str, Any] = dict(
        model=dict(type="Linear"), work_dir=str(work_dir), log_level="WARNING",
        train_dataloader=dict(batch_size=batch_size, dataset=dict(type="Numbered"),
                              sampler=dict(type=sampler, shuffle=True),
                              collate_fn=dict(type="default_collate")),
        train_cfg=train_cfg, optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=3, by_epoch=False,
                                           save_last=False)),
        randomness=dict(seed=5),
    )  # fmt: skip
    cfg.update(overrides)
    runner = Runner.from_cfg(cfg)
    seen = Seen()
    runner.register_hook(seen)
    runner.train()
    return seen


def test_an_epoch_resumed_with_another_batch_size_sees_each_remaining_sample_once(tmp_path):
    first = run(tmp_path / "a", 4, dict(max_epochs=1))  # checkpoint after 3 x 4 = 12 samples
    checkpoint = os.path.join(tmp_path / "a", "iter_3.pth")
    with pytest.warns(UserWarning, match="another data layout") as caught:
        rest = run(tmp_path / "b", 2, dict(max_epochs=1), resume=checkpoint)
    assert rest.indices == first.indices[12:]  # the same order, from the 13th sample on
    assert rest.batch_idx == [6, 7]  # the epoch still ends at len(dataloader) - 1 = 7
    message = next(str(w.message) for w in caught if "another data layout" in str(w.message))
    assert "1 process(es) x 4 = 4" in message and "1 process(es) x 2 = 2" in message
    assert "auto_scale_lr" not in message

    lr_scaled = dict(auto_scale_lr=dict(enable=True, base_batch_size=4))
    with pytest.warns(
        UserWarning,
        match="auto_scale_lr is enabled, but the learning rates "
        r"continue from the checkpoint \(scaled for the global batch of 4\)",
    ):
        run(tmp_path / "c", 2, dict(max_epochs=1), resume=checkpoint, **lr_scaled)


@pytest.mark.parametrize("sampler", ["DefaultSampler", "InfiniteSampler"])
def test_an_iteration_loop_resumed_with_another_batch_size_continues_the_stream(tmp_path, sampler):
    loop = dict(type="IterBasedTrainLoop", max_iters=8)  # 32 samples: two passes of 16
    first = run(tmp_path / "a", 4, loop, sampler)
    checkpoint = os.path.join(tmp_path / "a", "iter_3.pth")  # 12 samples consumed
    with pytest.warns(UserWarning, match="another data layout"):
        rest = run(tmp_path / "b", 2, dict(loop, max_iters=9), sampler, resume=checkpoint)
    assert rest.indices == first.indices[12:24]  # across the end of the first pass
    # resumed again with the first layout from the second run's own checkpoint (iter 6:
    # 12 + 3 x 2 = 18 samples, into the second pass)
    again = os.path.join(tmp_path / "b", "iter_6.pth")
    with pytest.warns(UserWarning, match="another data layout"):
        last = run(tmp_path / "c", 4, dict(loop, max_iters=8), sampler, resume=again)
    assert last.indices == first.indices[18:26]
