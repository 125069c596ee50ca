"""DataLoader worker processes end when the runner call that started them returns, not
when the garbage collector frees the runner (where torch's shutdown waits 5 s a worker)."""

from __future__ import annotations

import multiprocessing
import os
import sys

import pytest
from torch.utils.data import DataLoader

from cadence.dataset import build_dataloader
from cadence.dataset.release import release_workers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "runner"))  # fmt: skip
from runner_toys import register_toys, toy_config, train_counting  # noqa: E402


@pytest.fixture(autouse=True)
def _toys() -> None:
    register_toys()


def new_children(before: set) -> list:
    return [p for p in multiprocessing.active_children() if p not in before]


def loader(workers: int, persistent: bool = False) -> dict:
    return dict(batch_size=16, num_workers=workers, persistent_workers=persistent,
                dataset=dict(type="Blobs", n=64, seed=0),
                sampler=dict(type="DefaultSampler", shuffle=True),
                collate_fn=dict(type="default_collate"))  # fmt: skip


def test_an_iteration_loop_stopped_mid_epoch_leaves_no_worker(tmp_path):
    before = set(multiprocessing.active_children())
    cfg = toy_config(tmp_path, train_dataloader=loader(2),
                     train_cfg=dict(type="IterBasedTrainLoop", max_iters=3))  # fmt: skip
    runner, counter = train_counting(cfg)
    assert counter.iters == 3  # 3 of the epoch's 4 batches: torch's iterator is not exhausted
    assert new_children(before) == []
    assert runner.train_loop._endless is not None  # the loop keeps its iterator: released


def test_persistent_workers_end_with_training_and_validation(tmp_path):
    before = set(multiprocessing.active_children())
    cfg = toy_config(tmp_path, 2, train_dataloader=loader(2, persistent=True),
                     val_dataloader=loader(1, persistent=True), val_cfg=dict(),
                     val_evaluator=dict(type="Accuracy"))  # fmt: skip
    runner, counter = train_counting(cfg)
    assert counter.iters == 8
    assert new_children(before) == []
    assert runner.train_dataloader._iterator is None
    metrics = runner.val()  # a later call starts its workers again, and ends them
    assert "accuracy/top1" in metrics and new_children(before) == []


def test_release_follows_cadences_iterator_wrappers():
    before = set(multiprocessing.active_children())
    built = build_dataloader(loader(2))
    batches = iter(built)
    next(batches)
    assert len(new_children(before)) == 2
    assert release_workers(batches) == 1
    assert new_children(before) == []
    plain = DataLoader(list(range(8)), num_workers=1, persistent_workers=True)
    list(plain)
    assert plain._iterator is not None and release_workers(plain) == 1
    assert plain._iterator is None and new_children(before) == []
    assert list(plain) and release_workers(plain) == 1  # a fresh iterator works, then ends
