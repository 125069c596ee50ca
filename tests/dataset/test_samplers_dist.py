"""Samplers on a real two-process gloo group: shared seed, disjoint shards, same permutation."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from cadence.dataset import DefaultSampler, InfiniteSampler
from cadence.dist.testing import run_distributed

pytestmark = pytest.mark.dist


def _shards() -> dict:
    from cadence.dist import get_rank

    np.random.seed(50 + get_rank())  # without syncing, the ranks would draw different seeds
    sampler = DefaultSampler(list(range(7)))  # seed=None: drawn on rank 0 and shared
    epochs = {}
    for epoch in (0, 1):
        sampler.set_epoch(epoch)
        epochs[epoch] = list(sampler)
    infinite = InfiniteSampler(list(range(5)), seed=None)
    return {
        "seed": sampler.seed,
        "shard": (sampler.rank, sampler.world_size, len(sampler)),
        "epochs": epochs,
        "infinite_seed": infinite.seed,
        "infinite": list(itertools.islice(iter(infinite), 10)),
    }


def test_default_sampler_shards_cover_the_dataset_on_two_ranks():
    out = run_distributed(_shards, world_size=2, timeout=30)
    seed = out[0]["seed"]
    assert seed == np.random.RandomState(50).randint(2**31) == out[1]["seed"]
    assert [o["shard"] for o in out] == [(0, 2, 4), (1, 2, 4)]
    for epoch in (0, 1):
        rank0, rank1 = out[0]["epochs"][epoch], out[1]["epochs"][epoch]
        order = torch.randperm(7, generator=torch.Generator().manual_seed(seed + epoch)).tolist()
        padded = order + order[:1]  # round_up: one duplicate so both ranks get 4
        assert rank0 == padded[0::2] and rank1 == padded[1::2]
        assert sorted(rank0 + rank1) == sorted(list(range(7)) + [order[0]])
    assert out[0]["epochs"][0] != out[0]["epochs"][1]
    # InfiniteSampler: same seed on both ranks; each pass of 5 is split without overlap
    assert out[0]["infinite_seed"] == out[1]["infinite_seed"]
    merged = [x for pair in zip(out[0]["infinite"], out[1]["infinite"]) for x in pair]
    for start in range(0, 20, 5):
        assert sorted(merged[start : start + 5]) == list(range(5))
