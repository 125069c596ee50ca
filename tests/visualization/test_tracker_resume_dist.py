"""Two gloo ranks: the checkpoint holds rank 0's tracker run and a resumed run continues it."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

from cadence.dist.testing import run_distributed

HERE = os.path.dirname(os.path.abspath(__file__))


def train_two_parts(work_dir: str) -> tuple[str, str]:
    """On each rank: 2 epochs, then a new Runner resumes to 4; return both log dirs."""
    sys.path.insert(0, HERE)
    from vis_toys import loader, register_toys

    from cadence.config import Config
    from cadence.runner import Runner

    register_toys()
    log_dirs = []
    for max_epochs, resume in ((2, False), (4, True)):
        cfg = dict(
            model=dict(type="TinyClassifier"),
            work_dir=work_dir,
            train_dataloader=loader(64, 0, 16, True),  # 2 iterations per rank and epoch
            train_cfg=dict(by_epoch=True, max_epochs=max_epochs),
            optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
            default_hooks=dict(logger=dict(type="LoggerHook", interval=1)),
            visualizer=dict(type="Visualizer", vis_backends=[dict(type="TensorboardVisBackend")]),
            strategy=dict(type="DDPStrategy"),
            resume=resume,
        )
        runner = Runner.from_cfg(Config(cfg))
        runner.train()
        log_dirs.append(runner.log_dir)
    return log_dirs[0], log_dirs[1]


@pytest.mark.dist
def test_a_resumed_ddp_run_continues_rank_0s_tensorboard_run(tmp_path):
    work = tmp_path / "work"
    (first, second), same = run_distributed(train_two_parts, str(work), timeout=120)
    assert same == (first, second)  # every rank names the same log folders
    event_dirs = {p.parent for p in work.rglob("events.out.tfevents.*")}
    assert event_dirs == {Path(first) / "vis_data"}  # rank 0's, both parts; rank 1 none
    events = EventAccumulator(str(Path(first) / "vis_data"))
    events.Reload()
    assert [event.step for event in events.Scalars("loss")] == list(range(1, 9))
    checkpoint = torch.load(work / "epoch_4.pth", weights_only=True)
    stored = checkpoint["visualizer"]["backends"]["TensorboardVisBackend"]
    assert stored["log_dir"] == str(Path(first) / "vis_data")
