"""DefaultSampler and InfiniteSampler: sharding, shuffling and resuming (ranks given explicitly)."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from cadence.dataset import DefaultSampler, InfiniteSampler
from cadence.registry import DATA_SAMPLERS


def perm(n: int, seed: int) -> list[int]:
    """The reference permutation: torch.randperm from a generator seeded with ``seed``."""
    return torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()


def shards(n: int, world: int, **kwargs) -> list[list[int]]:
    return [
        list(DefaultSampler(range(n), rank=r, world_size=world, **kwargs)) for r in range(world)
    ]


# ----------------------------------------------------------------------------- DefaultSampler


def test_samplers_are_registered():
    assert DATA_SAMPLERS.get("DefaultSampler") is DefaultSampler
    assert DATA_SAMPLERS.get("InfiniteSampler") is InfiniteSampler


def test_default_sampler_in_order_without_shuffle():
    sampler = DefaultSampler(range(5), shuffle=False, seed=0, rank=0, world_size=1)
    assert list(sampler) == [0, 1, 2, 3, 4]
    assert len(sampler) == 5


def test_default_sampler_shuffles_with_seed_plus_epoch():
    sampler = DefaultSampler(range(10), seed=3, rank=0, world_size=1)
    assert list(sampler) == perm(10, 3)
    sampler.set_epoch(4)
    assert list(sampler) == perm(10, 7)
    assert list(sampler) == perm(10, 7)  # same epoch, same order


def test_default_sampler_round_up_pads_from_the_start_of_the_order():
    order = perm(7, 11)
    padded = order + order[:1]
    assert shards(7, 2, seed=11) == [padded[0::2], padded[1::2]]
    assert [len(DefaultSampler(range(7), seed=11, rank=r, world_size=2)) for r in (0, 1)] == [4, 4]


def test_default_sampler_round_up_when_world_exceeds_dataset():
    # 2 samples on 5 ranks: the order is repeated until 5 positions are filled
    got = shards(2, 5, shuffle=False, seed=0)
    assert got == [[0], [1], [0], [1], [0]]


def test_default_sampler_without_round_up_gives_uneven_disjoint_shards():
    order = perm(7, 11)
    got = shards(7, 2, seed=11, round_up=False)
    assert got == [order[0::2], order[1::2]]
    assert [len(DefaultSampler(range(7), seed=0, round_up=False, rank=r, world_size=3))
            for r in range(3)] == [3, 2, 2]  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 40),
    world=st.integers(1, 6),
    round_up=st.booleans(),
    epoch=st.integers(0, 5),
)
def test_shards_interleave_back_into_the_padded_permutation(n, world, round_up, epoch):
    parts = []
    for rank in range(world):
        sampler = DefaultSampler(range(n), seed=5, round_up=round_up, rank=rank, world_size=world)
        sampler.set_epoch(epoch)
        parts.append(list(sampler))
        assert len(parts[-1]) == len(sampler)
    merged = [x for group in itertools.zip_longest(*parts) for x in group if x is not None]
    order = perm(n, 5 + epoch)
    total = -(-n // world) * world if round_up else n
    expected = (order * (total // n + 1))[:total] if n else []
    assert merged == expected
    assert sorted(set(merged)) == list(range(n))


def test_default_sampler_seed_none_uses_the_synced_seed():
    np.random.seed(21)
    expected = np.random.RandomState(21).randint(2**31)
    sampler = DefaultSampler(range(4))
    assert sampler.seed == expected
    assert (sampler.rank, sampler.world_size) == (0, 1)


def test_default_sampler_rejects_bad_shards():
    with pytest.raises(ValueError, match="rank < world_size"):
        DefaultSampler(range(4), seed=0, rank=2, world_size=2)
    with pytest.raises(ValueError, match="rank < world_size"):
        DefaultSampler(range(4), seed=0, rank=0, world_size=0)


@pytest.mark.parametrize("rank", [0, 1])
def test_set_start_index_yields_the_tail_of_the_uninterrupted_epoch_once(rank):
    sampler = DefaultSampler(range(11), seed=9, rank=rank, world_size=2)
    sampler.set_epoch(2)
    full = list(sampler)
    sampler.set_start_index(4)
    assert list(sampler) == full[4:]
    assert list(sampler) == full  # only the next pass starts late
    sampler.set_start_index(100)
    assert list(sampler) == []
    with pytest.raises(ValueError, match=">= 0"):
        sampler.set_start_index(-1)


def test_set_epoch_keeps_a_pending_start_index():
    sampler = DefaultSampler(range(9), seed=1, rank=0, world_size=1)
    sampler.set_start_index(3)
    sampler.set_epoch(5)
    assert list(sampler) == perm(9, 6)[3:]


def test_default_sampler_state_dict_resumes_in_a_fresh_sampler():
    original = DefaultSampler(range(13), seed=4, rank=1, world_size=2)
    original.set_epoch(3)
    original.set_start_index(2)
    state = original.state_dict()
    assert state == {"epoch": 3, "seed": 4, "start_index": 2, "world_size": 2, "dataset_size": 13}
    resumed = DefaultSampler(range(13), seed=999, rank=1, world_size=2)
    resumed.load_state_dict(state)
    padded = perm(13, 7) + perm(13, 7)[:1]
    assert list(resumed) == padded[1::2][2:]
    assert resumed.epoch == 3 and resumed.seed == 4


def test_default_sampler_load_state_dict_checks_the_state():
    sampler = DefaultSampler(range(4), seed=0, rank=0, world_size=1)
    with pytest.raises(KeyError, match="missing \\['epoch'\\]"):
        sampler.load_state_dict({"seed": 1})
    with pytest.warns(UserWarning, match="dataset_size 5 -> 4"):
        sampler.load_state_dict({"epoch": 0, "seed": 1, "world_size": 1, "dataset_size": 5})


@pytest.mark.parametrize("round_up", [True, False])
@pytest.mark.parametrize("new_world", [1, 2, 3, 5])
def test_a_start_position_deals_the_rest_of_the_shared_order_to_any_number_of_ranks(
    round_up, new_world
):
    n, seed, epoch, consumed = 24, 7, 2, 8  # 2 ranks took 4 samples each of the epoch
    order = perm(n, seed + epoch)
    unseen = order[consumed:]
    padding = -len(unseen) % new_world if round_up else 0
    padded = unseen + order[:padding]  # the padding repeats the start of the order
    rest = []
    for rank in range(new_world):
        sampler = DefaultSampler(range(n), seed=seed, round_up=round_up, rank=rank,
                                 world_size=new_world)  # fmt: skip
        sampler.set_epoch(epoch)
        sampler.set_start_position(consumed)
        mine = list(sampler)
        assert mine == padded[rank::new_world]  # round robin over the rest
        assert sampler.num_samples_from(consumed) == len(mine)
        rest.extend(mine)
    assert sorted(rest) == sorted(padded)  # each unseen sample once (plus the padding)


@pytest.mark.parametrize("world", [1, 2, 3])
def test_a_start_index_is_a_start_position_of_whole_rounds(world):
    for rank in range(world):
        by_index = DefaultSampler(range(11), seed=2, rank=rank, world_size=world)
        by_position = DefaultSampler(range(11), seed=2, rank=rank, world_size=world)
        by_index.set_start_index(2)
        by_position.set_start_position(2 * world)
        assert list(by_index) == list(by_position)
        stream = InfiniteSampler(range(5), seed=3, rank=rank, world_size=world)
        stream.set_start_index(4)
        tail = take(stream, 9)
        stream.set_start_position(4 * world)
        assert take(stream, 9) == tail


def test_a_pending_start_saved_by_other_ranks_keeps_its_place_in_the_shared_order():
    saved = DefaultSampler(range(13), seed=4, rank=0, world_size=2)
    saved.set_start_index(3)  # position 6 of the shared order
    state = saved.state_dict()
    resumed = DefaultSampler(range(13), seed=0, rank=1, world_size=3)
    resumed.load_state_dict(state)  # no warning: only the dealing changes
    assert list(resumed) == (perm(13, 4) + perm(13, 4)[:2])[6 + 1 :: 3]
    resumed.set_start_position(7)  # not whole rounds of 3: saved as a position
    assert resumed.state_dict()["start_position"] == 7
    stream = InfiniteSampler(range(13), seed=4, rank=0, world_size=1)
    stream.load_state_dict({**state, "start_position": 7})
    assert take(stream, 3) == perm(13, 4)[7:10]


# ---------------------------------------------------------------------------- InfiniteSampler


def global_stream(n: int, seed: int, passes: int, shuffle: bool = True) -> list[int]:
    """The documented shared stream (mmengine's): successive permutations drawn from one
    generator seeded with ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    out: list[int] = []
    for _ in range(passes):
        out.extend(torch.randperm(n, generator=generator).tolist() if shuffle else range(n))
    return out


def take(sampler, count: int) -> list[int]:
    return list(itertools.islice(iter(sampler), count))


def test_infinite_sampler_single_rank_is_successive_permutations():
    sampler = InfiniteSampler(range(6), seed=2, rank=0, world_size=1)
    assert take(sampler, 18) == global_stream(6, 2, 3)
    assert len(sampler) == 6


@pytest.mark.parametrize("world", [2, 3, 4])
def test_infinite_sampler_ranks_take_round_robin_slices_of_the_stream(world):
    stream = global_stream(7, 5, 8)
    for rank in range(world):
        sampler = InfiniteSampler(range(7), seed=5, rank=rank, world_size=world)
        assert take(sampler, 12) == stream[rank::world][:12]


def test_infinite_sampler_without_shuffle_repeats_the_dataset():
    sampler = InfiniteSampler(range(3), shuffle=False, seed=0, rank=1, world_size=2)
    assert take(sampler, 6) == [1, 0, 2, 1, 0, 2]


def test_infinite_sampler_set_epoch_has_no_effect_and_empty_dataset_ends():
    sampler = InfiniteSampler(range(5), seed=1, rank=0, world_size=1)
    sampler.set_epoch(9)
    assert take(sampler, 5) == perm(5, 1)
    assert list(InfiniteSampler([], seed=0, rank=0, world_size=1)) == []


@pytest.mark.parametrize("start", [1, 5, 13])
def test_infinite_sampler_start_index_matches_the_uninterrupted_stream(start):
    sampler = InfiniteSampler(range(5), seed=8, rank=1, world_size=2)
    uninterrupted = take(sampler, start + 20)
    sampler.set_start_index(start)
    assert take(sampler, 20) == uninterrupted[start:]
    assert take(sampler, 5) == uninterrupted[:5]  # only the next pass starts late


def test_infinite_sampler_resumes_far_into_the_stream_quickly():
    # a start in pass k redraws the k permutations before it (mmengine's order comes from
    # one generator), but iterates none of their items
    n, world, rank, start = 1000, 2, 1, 10**6
    sampler = InfiniteSampler(range(n), seed=3, rank=rank, world_size=world)
    began = time.process_time()  # CPU time: other processes (xdist workers) do not count
    sampler.set_start_index(start)
    window = take(sampler, 8)
    elapsed = time.process_time() - began
    assert elapsed < 0.5, elapsed
    first = rank + start * world  # global position of this rank's start-th item
    k = first // n
    stream = global_stream(n, 3, k + 3)[k * n :]
    expected = stream[first - k * n :: world][:8]
    assert window == expected


def test_infinite_sampler_state_dict_round_trip():
    original = InfiniteSampler(range(9), seed=6, rank=0, world_size=3)
    original.set_start_index(40)
    state = original.state_dict()
    assert state == {"seed": 6, "start_index": 40, "world_size": 3, "dataset_size": 9}
    resumed = InfiniteSampler(range(9), seed=1, rank=0, world_size=3)
    resumed.load_state_dict(state)
    assert take(resumed, 10) == global_stream(9, 6, 20)[0::3][40:50]
    with pytest.raises(KeyError, match="missing \\['seed'\\]"):
        resumed.load_state_dict({})
    with pytest.raises(TypeError, match="expects a dict"):
        resumed.load_state_dict([1])  # type: ignore[arg-type]


def test_tagged_samplers_say_where_each_index_sits():
    from cadence.dataset import SampleIndex

    sampler = DefaultSampler(list(range(10)), shuffle=True, seed=3, rank=1, world_size=2)
    plain = list(sampler)
    sampler.tag_positions = True
    sampler.set_epoch(0)
    tagged = list(sampler)
    assert tagged == plain and all(isinstance(i, SampleIndex) for i in tagged)
    assert [(i.epoch, i.position) for i in tagged] == [(0, p) for p in range(5)]
    sampler.set_epoch(4)
    sampler.set_start_index(3)
    assert [(i.epoch, i.position) for i in sampler] == [(4, 3), (4, 4)]

    stream = InfiniteSampler(list(range(3)), seed=1, rank=0, world_size=2)
    stream.set_start_index(5)
    plain = list(itertools.islice(stream, 3))
    stream.tag_positions = True
    stream.set_start_index(5)
    first = list(itertools.islice(stream, 3))
    assert first == plain
    assert [(i.epoch, i.position) for i in first] == [(0, 5), (0, 6), (0, 7)]
