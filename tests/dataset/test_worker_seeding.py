"""Worker seeding: the documented formula, and real DataLoader workers (num_workers=2)."""

from __future__ import annotations

import pickle
import random
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, get_worker_info

from cadence.dataset import WorkerSeeder, build_dataloader, worker_init_fn, worker_seed
from cadence.dataset.multigrid import ShortCycleBatchSampler
from cadence.dataset.worker import BatchSeeding, SampleIndex, batch_seed


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


def load_loader(seed: int, num_workers: int = 2, sampler: Any = None, **options: Any) -> Any:
    return build_dataloader(
        dict(
            batch_size=1,
            num_workers=num_workers,
            dataset=WorkerDraws(),
            sampler=sampler if sampler is not None else dict(type="DefaultSampler", shuffle=False),
            collate_fn=first_sample,
            **options,
        ),
        seed=seed,
    )


def load(seed: int, epoch: int = 0, **kwargs: Any) -> list[tuple]:
    loader = load_loader(seed, **kwargs)
    if hasattr(loader.sampler, "set_epoch"):
        loader.sampler.set_epoch(epoch)
    return list(loader)


def test_dataloader_workers_without_positions_get_distinct_reproducible_seeds():
    # a plain sampler yields plain ints: each worker keeps the stream seeded at its start
    first = load(seed=42, sampler=[0, 1, 2, 3])
    # batches alternate between the two workers; each worker's first sample shows its seed
    assert [sample[0] for sample in first] == [0, 1, 0, 1]
    worker0, worker1 = first[0][1:], first[1][1:]
    assert worker0 == expected_draws(worker_seed(42, 0, 0, 0))
    assert worker1 == expected_draws(worker_seed(42, 0, 1, 0))
    assert worker0 != worker1
    assert load(seed=42, sampler=[0, 1, 2, 3]) == first  # a second build with the same seed
    assert load(seed=43, sampler=[0, 1, 2, 3])[0] != first[0]


def reference_batch_seed(seed: int, rank: int, epoch: int, position: int) -> int:
    """The per-batch formula of cadence.dataset.worker's docstring, computed directly."""
    entropy = [seed % 2**64, rank, epoch, position, 1]
    return int(np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0]) % 2**63


def test_batch_seed_follows_the_documented_formula():
    assert batch_seed(42, 1, 3, 17) == reference_batch_seed(42, 1, 3, 17)
    seeds = {batch_seed(7, r, e, p) for r in (0, 1) for e in (0, 1) for p in (0, 1, 2)}
    assert len(seeds) == 12
    assert batch_seed(7, 0, 0, 0) != worker_seed(7, 0, 0, 0)


def test_each_batch_draws_from_its_place_whatever_worker_loads_it():
    expected = [expected_draws(reference_batch_seed(42, 0, 2, p)) for p in range(4)]
    for workers in (1, 2):
        samples = load(seed=42, epoch=2, num_workers=workers)
        assert [s[1:] for s in samples] == expected, workers
    # the same batches drawn by persistent workers in a later pass
    loader = load_loader(seed=42, num_workers=2, persistent_workers=True)
    list(loader)
    loader.sampler.set_epoch(2)
    assert [s[1:] for s in loader] == expected
    assert load(seed=42, epoch=3)[0][1:] != expected[0]
    assert load(seed=43, epoch=2)[0][1:] != expected[0]


def test_a_pass_started_mid_epoch_draws_what_the_whole_pass_drew():
    whole = load(seed=5, epoch=1, num_workers=2)
    loader = load_loader(seed=5, num_workers=2)
    loader.sampler.set_epoch(1)
    loader.sampler.set_start_index(3)  # resume after 3 samples
    assert list(loader) == [(0, *s[1:]) for s in whole[3:]]  # worker 0 now loads sample 3


def test_sampler_positions_survive_pickling_and_reach_the_dataset_as_ints():
    index = SampleIndex(5, epoch=2, position=9)
    copy = pickle.loads(pickle.dumps(index))
    assert (copy, copy.epoch, copy.position) == (5, 2, 9) and isinstance(copy, SampleIndex)

    class Recording(Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, i: int) -> tuple[int, str]:
            return i, type(i).__name__

    loader = build_dataloader(
        dict(batch_size=2, num_workers=1, dataset=Recording(),
             sampler=dict(type="DefaultSampler", shuffle=False), collate_fn=list),
        seed=0,
    )  # fmt: skip
    assert loader.sampler.tag_positions
    assert list(loader) == [[(0, "int"), (1, "int")], [(2, "int"), (3, "int")]]
    no_workers = build_dataloader(
        dict(batch_size=2, dataset=Recording(), sampler=dict(type="DefaultSampler")), seed=0
    )
    assert not no_workers.sampler.tag_positions  # the main process gets plain ints


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


def test_short_cycle_batches_draw_from_their_place_and_keep_their_crop():
    class Cropped(Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, index: Any) -> tuple:
            i, crop = index
            return type(index).__name__, type(i).__name__, int(i), crop, *draws()

    plain = load_loader(seed=42, num_workers=2)  # a tagged sampler and cadence's worker seeding
    plain.sampler.set_epoch(1)
    loader = DataLoader(
        Cropped(), batch_sampler=ShortCycleBatchSampler(plain.sampler, [1, 2], [8, 4]),
        num_workers=2, worker_init_fn=plain.worker_init_fn, collate_fn=first_sample,
    )  # fmt: skip
    batches = list(loader)  # samples 0 | 1 2 | 3: first indices at positions 0, 1 and 3
    assert [b[:4] for b in batches] == [
        ("ShortCycleIndex", "int", 0, 8), ("ShortCycleIndex", "int", 1, 4),
        ("ShortCycleIndex", "int", 3, 8),
    ]  # fmt: skip
    expected = [expected_draws(reference_batch_seed(42, 0, 1, p)) for p in (0, 1, 3)]
    assert [b[4:] for b in batches] == expected


def test_batch_seeding_replaces_only_the_index_of_tuple_items():
    class Echo(Dataset):
        def __len__(self) -> int:
            return 4

        def __getitem__(self, index: Any) -> Any:
            return index

    seeding = BatchSeeding(Echo(), seed=3, rank=0)
    items = seeding([(SampleIndex(2, 0, 5), "crop"), (SampleIndex(3, 0, 6), "crop")])
    assert items == [(2, "crop"), (3, "crop")]
    assert all(type(i) is tuple and type(i[0]) is int for i in items)
    assert draws() == expected_draws(reference_batch_seed(3, 0, 0, 5)) and seeding([]) == []
    assert seeding([(1, "crop")]) == [(1, "crop")]  # untagged: passed through, not reseeded
