"""The hang watchdog's setting, its lifetime, and no false alarm in long saves and validation.

The report itself (several ranks, one stuck) is tested under torchrun in
``tests/resilience/test_hang_watchdog.py``.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from runner_toys import toy_config

from cadence.hooks import Hook
from cadence.resilience.hang_watch import effective_hang_timeout, hang_timeout_from
from cadence.runner import Runner

WATCHDOG = "cadence-hang-watchdog"


@pytest.mark.parametrize("value", [-1, "600", True, float("nan"), [5]])
def test_a_bad_hang_timeout_names_its_key(tmp_path, value):
    cfg = toy_config(tmp_path, env_cfg=dict(dist_cfg=dict(hang_timeout=value)))
    with pytest.raises(ValueError, match=r"env_cfg\.dist_cfg\.hang_timeout must be a number"):
        Runner.from_cfg(cfg)


def test_the_default_watches_several_processes_only():
    assert hang_timeout_from({}) is None
    assert hang_timeout_from({"dist_cfg": {"hang_timeout": 0}}) == 0.0
    assert effective_hang_timeout(None, world_size=2) == 600.0
    assert effective_hang_timeout(None, world_size=1) == 0.0  # one process: only when asked
    assert effective_hang_timeout(5.0, world_size=1) == 5.0
    assert effective_hang_timeout(0.0, world_size=8) == 0.0  # 0 turns it off


class SlowParts(Hook):
    """A slow checkpoint state (``save`` seconds) and slow validation batches; records
    whether the watchdog thread runs while training."""

    def __init__(self, save: float, val_batch: float) -> None:
        self.save, self.val_batch = save, val_batch
        self.watched: list[bool] = []

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        self.watched.append(any(t.name == WATCHDOG for t in threading.enumerate()))

    def after_val_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                       outputs: Any = None) -> None:  # fmt: skip
        time.sleep(self.val_batch)

    def state_dict(self) -> dict[str, Any]:
        time.sleep(self.save)
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass


@pytest.mark.slow
def test_long_saves_and_validations_are_no_hang_and_no_thread_outlives_training(tmp_path):
    """hang_timeout=1 s: a checkpoint save of 1.1 s (every rank saves: busy) and a validation of
    1.1 s (each batch is progress) pass; the watchdog ran during training and is gone after."""
    loader = dict(batch_size=8, dataset=dict(type="Blobs", n=40, seed=1),
                  sampler=dict(type="DefaultSampler", shuffle=False),
                  collate_fn=dict(type="default_collate"))  # fmt: skip
    cfg = toy_config(
        tmp_path, n=32, env_cfg=dict(dist_cfg=dict(hang_timeout=1)),
        val_dataloader=loader, val_cfg=dict(), val_evaluator=dict(type="Accuracy", topk=(1,)),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=1),
                           logger=dict(type="LoggerHook", progress="off")),
    )  # fmt: skip
    runner = Runner.from_cfg(cfg)
    slow = SlowParts(save=1.1, val_batch=0.22)
    runner.register_hook(slow)
    start = time.monotonic()
    runner.train()  # a false alarm would end this process with code 3
    took = time.monotonic() - start
    print(f"training with a 1.1 s save and a 1.1 s validation under hang_timeout=1: {took:.2f} s")
    assert took > 2.2
    assert slow.watched and all(slow.watched)
    assert not [t for t in threading.enumerate() if t.name == WATCHDOG]
