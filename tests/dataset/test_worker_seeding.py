"""Worker seeding: the documented formula, and real DataLoader workers (num_workers=2)."""

from __future__ import annotations

import random

import numpy as np
import torch
from torch.utils.data import Dataset, get_worker_info

from cadence.dataset import WorkerSeeder, build_dataloader, worker_init_fn, worker_seed


def reference_seed(seed: int, rank: int, worker_id: int, epoch: int) -> int:
    """The formula written in cadence.dataset.worker's docstring, computed directly."""
    state = np.random.SeedSequence([seed % 2**64, rank, worker_id, epoch]).generate_state(
        1, np.uint64
    )
    return int(state[0]) % 2**63


def test_worker_seed_follows_the_documented_formula():
    assert worker_seed(42, 1, 3, 2) == reference_seed(42, 1, 3, 2)
    assert worker_seed(-5, 0, 0) == reference_seed(-5, 0, 0, 0)
    seeds = {
        worker_seed(s, r, w, e) for s in (0, 1) for r in (0, 1) for w in (0, 1) for e in (0, 1)
    }
    assert len(seeds) == 16  # no two of (seed, rank, worker, epoch) share a stream
    assert all(0 <= s < 2**63 for s in seeds)


def draws() -> tuple[float, float, float]:
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def expected_draws(seed: int) -> tuple[float, float, float]:
    gen = torch.Generator().manual_seed(seed)
    return (
        random.Random(seed).random(),
        float(np.random.RandomState(seed % 2**32).rand()),
        float(torch.rand(1, generator=gen)),
    )


def test_worker_seeder_seeds_random_numpy_and_torch():
    class Sampler:
        epoch = 3

    WorkerSeeder(7, rank=1, epoch_source=Sampler())(2)
    assert draws() == expected_draws(worker_seed(7, 1, 2, 3))
    worker_init_fn(1, num_workers=4, rank=0, seed=9)
    assert draws() == expected_draws(worker_seed(9, 0, 1, 0))


class WorkerDraws(Dataset):
    """Each sample reports which worker loaded it and that worker's first random draws."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> tuple:
        info = get_worker_info()
        return (info.id, *draws())


def first_sample(batch: list) -> tuple:
    return batch[0]


def load(seed: int, epoch: int = 0) -> list[tuple]:
    loader = build_dataloader(
        dict(
            batch_size=1,
            num_workers=2,
            dataset=WorkerDraws(),
            sampler=dict(type="DefaultSampler", shuffle=False),
            collate_fn=first_sample,
        ),
        seed=seed,
    )
    loader.sampler.set_epoch(epoch)
    return list(loader)


def test_dataloader_workers_get_distinct_reproducible_seeds():
    first = load(seed=42)
    # batches alternate between the two workers; each worker's first sample shows its seed
    assert [sample[0] for sample in first] == [0, 1, 0, 1]
    worker0, worker1 = first[0][1:], first[1][1:]
    assert worker0 == expected_draws(worker_seed(42, 0, 0, 0))
    assert worker1 == expected_draws(worker_seed(42, 0, 1, 0))
    assert worker0 != worker1
    assert load(seed=42) == first  # a second build with the same seed
    assert load(seed=43)[0] != first[0]
    assert load(seed=42, epoch=1)[0][1:] == expected_draws(worker_seed(42, 0, 0, 1))


def record_init(worker_id: int, offset: int) -> None:
    random.seed(offset + worker_id)


def test_a_user_worker_init_fn_runs_in_the_workers():
    loader = build_dataloader(
        dict(
            batch_size=1,
            num_workers=2,
            dataset=WorkerDraws(),
            sampler=dict(type="DefaultSampler", shuffle=False),
            collate_fn=first_sample,
            worker_init_fn=dict(type=record_init, offset=1000),
        ),
        seed=0,
    )
    samples = list(loader)
    assert samples[0][1] == random.Random(1000).random()
    assert samples[1][1] == random.Random(1001).random()
