"""Multigrid schedule arithmetic, the short-cycle batch sampler and the loader it builds."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader, SequentialSampler

from cadence.dataset import DefaultSampler, MultigridSchedule, ShortCycleBatchSampler
from cadence.dataset.multigrid import (
    MultigridDataset,
    ShortCycleIndex,
    count_batches,
    multigrid_dataloader,
    split_index,
)

# A known configuration, worked out by hand from the paper's formulas (Wu et al. 2020, and
# the reference implementation's arithmetic):
#   base: batch B=4, T=8 frames, S=16 crop; original schedule: LR x0.1 at epochs 4 and 8,
#   12 epochs; epoch factor 1.5; default long-cycle factors (0.25, .707) (0.5, .707)
#   (0.5, 1) (1, 1); short-cycle crop factors 0.5, .707.
#   crops: round(16 * .707) = 11, round(16 * .5) = 8
#   batch factor of (t, s) = round(T S^2 / (t s^2)) = round(2048 / (t s^2))
#     t=2 (crops 8, 11, 11): 16, 8, 8   -> average 32/3
#     t=4 (crops 8, 11, 11):  8, 4, 4   -> average 16/3
#     t=4 (crops 8, 11, 16):  8, 4, 2   -> average 14/3
#     t=8 (crops 8, 11, 16):  4, 2, 1   -> average  7/3      sum of averages = 23
#   each LR step of 4 epochs: shape i gets 4 * a_i / 23 epochs: 1.855, 0.928, 0.812, 0.406
#   fine-tuning: (12 - 8) * (7/3) / (23/4) = 1.623 epochs; total 9.623; scale 18 / 9.623
#   running sums x scale: 3.47 5.21 6.72 7.48 | 10.95 12.69 14.21 14.96 | 18.0
#   rounded stage ends:   3    5    7    7    | 11    13    14    15    | 18
#   LR (x base): step LR x long-cycle batch factor: 8 4 2 1 | .8 .4 .2 .1 | then the
#   fine-tuning phase (15-18) runs its first half (to (15 + 18) // 2 = 16) at .1, then .01.
HAND_TABLE = [
    # lr_step, begin, end, long-cycle batch, frames, crops of the short cycle
    (0, 0, 3, 32, 2, (8, 11, 11)),
    (0, 3, 5, 16, 4, (8, 11, 11)),
    (0, 5, 7, 8, 4, (8, 11, 16)),
    (0, 7, 7, 4, 8, (8, 11, 16)),
    (1, 7, 11, 32, 2, (8, 11, 11)),
    (1, 11, 13, 16, 4, (8, 11, 11)),
    (1, 13, 14, 8, 4, (8, 11, 16)),
    (1, 14, 15, 4, 8, (8, 11, 16)),
    (2, 15, 18, 4, 8, (8, 11, 16)),
]
HAND_CYCLE_BATCHES = {  # long-cycle batch -> batch sizes of its short cycle (B x factors)
    32: [64, 32, 32],
    16: [32, 16, 16],
    8: [32, 16, 8],
    4: [16, 8, 4],
}
HAND_LR_MILESTONES = [3, 5, 7, 7, 11, 13, 14, 15, 16]
HAND_LR_VALUES = [8, 4, 2, 1, 0.8, 0.4, 0.2, 0.1, 0.1, 0.01]


def known_schedule(**overrides) -> MultigridSchedule:
    args = dict(base_batch_size=4, base_frames=8, base_crop_size=16, milestones=[4, 8],
                max_epochs=12, gamma=0.1, epoch_factor=1.5)  # fmt: skip
    args.update(overrides)
    return MultigridSchedule(**args)


def test_schedule_matches_the_hand_computed_table():
    schedule = known_schedule()
    assert schedule.summary() == HAND_TABLE
    assert schedule.max_epochs == 18
    for stage in schedule.stages:
        assert [c.batch_size for c in stage.cycle] == HAND_CYCLE_BATCHES[stage.shape.batch_size]
        assert stage.cycle[-1] == stage.shape
        assert stage.finetune == (stage is schedule.stages[-1])
    assert schedule.lr_milestones == HAND_LR_MILESTONES
    assert schedule.lr_values == pytest.approx(HAND_LR_VALUES)


def test_every_long_cycle_shape_gets_comparable_iterations():
    schedule = known_schedule(epoch_factor=100.0)  # large, so rounding is small
    per_shape: dict[int, float] = {}
    for stage in schedule.stages[:-1]:
        mean_batch = sum(c.batch_size for c in stage.cycle) / len(stage.cycle)
        iters = stage.epochs / mean_batch  # iterations per sample of the dataset
        per_shape[stage.shape.batch_size] = per_shape.get(stage.shape.batch_size, 0) + iters
    values = list(per_shape.values())
    assert max(values) / min(values) < 1.02


def test_stage_and_lr_lookups_follow_the_table():
    schedule = known_schedule()
    # the zero-length stage 7-7 is never trained: epoch 7 is the next one
    expected_batches = [32] * 3 + [16] * 2 + [8] * 2 + [32] * 4 + [16] * 2 + [8, 4] + [4] * 3
    assert [schedule.stage_at(e).shape.batch_size for e in range(18)] == expected_batches
    assert schedule.stage_at(100) is schedule.stages[-1]
    lrs = [schedule.lr_at(e) for e in range(18)]
    hand = [8] * 3 + [4] * 2 + [2] * 2 + [0.8] * 4 + [0.4] * 2 + [0.2, 0.1, 0.1, 0.01, 0.01]
    assert lrs == pytest.approx(hand)


def test_without_short_cycles_each_stage_has_one_shape():
    schedule = known_schedule(short_cycle=False)
    assert all(len(s.cycle) == 1 for s in schedule.stages)
    # averages are now the long-cycle factors 8, 4, 2, 1 (sum 15): the first stage of the
    # first LR step gets 4 * 8/15 of the 4 + 4 + 4 * 1/3.75 original epochs
    scale = 18 / (8 + 4 * 1 / 3.75)
    assert schedule.stages[0].end == round(4 * 8 / 15 * scale)


def test_table_lists_every_stage_and_the_lr_steps():
    text = known_schedule().table()
    lines = text.splitlines()
    assert "12 epochs x 1.5 -> 18 epochs" in lines[0]
    assert len(lines) == 1 + 1 + len(HAND_TABLE) + 1
    assert "64x8, 32x11, 32x11" in lines[2]
    assert lines[-2].startswith("15-18 ft") and lines[-2].endswith("0.1, 0.01 from 16")
    assert lines[-1].startswith("LR (x base LR): 8 from 0, 4 from 3")


@pytest.mark.parametrize(
    "overrides, message",
    [
        (dict(milestones=[4, 12]), "before max_epochs"),
        (dict(milestones=[8, 4]), "increasing"),
        (dict(milestones=[]), "at least one"),
        (dict(lrs=[1.0, 0.1]), "lrs needs 3 values"),
        (dict(long_cycle_factors=[(2.0, 1.0)]), "larger than the base shape"),
        (dict(long_cycle_factors=[(1.0,)]), "must be a pair"),
        (dict(base_frames=0), "base_frames must be a positive int"),
        (dict(epoch_factor=0), "epoch_factor"),
    ],
)
def test_bad_arguments_are_named(overrides, message):
    with pytest.raises(ValueError, match=message):
        known_schedule(**overrides)


# ------------------------------------------------------------------ sampler
@pytest.mark.parametrize("n", [0, 1, 6, 13, 14, 27, 28, 29, 100])
@pytest.mark.parametrize("drop_last", [False, True])
def test_short_cycle_batches_cycle_sizes_and_crops(n, drop_last):
    sampler = ShortCycleBatchSampler(SequentialSampler(range(n)), [4, 2, 1], [8, 11, 16], drop_last)
    batches = list(sampler)
    assert len(batches) == len(sampler)
    flat = [item for batch in batches for item in batch]
    expected_total = n if not drop_last else sum(len(b) for b in batches)
    assert [item.sample for item in flat] == list(range(expected_total))
    for position, batch in enumerate(batches):
        size, crop = [(4, 8), (2, 11), (1, 16)][position % 3]
        assert all(item.crop_size == crop for item in batch)
        is_last = position == len(batches) - 1
        assert len(batch) == size or (is_last and not drop_last and len(batch) < size)


@pytest.mark.parametrize("skip", [0, 1, 2, 3, 4, 7])
def test_short_cycle_sampler_starts_mid_epoch_without_drawing_skipped_indices(skip):
    def make():
        sampler = DefaultSampler(range(40), shuffle=True, seed=5, rank=0, world_size=1)
        return ShortCycleBatchSampler(sampler, [4, 2, 1], [8, 11, 16])

    whole = list(make())
    resumed = make()
    assert resumed.set_start_batch(skip)
    assert list(resumed) == whole[skip:]
    assert list(resumed) == whole  # only the next pass starts late
    assert not ShortCycleBatchSampler(range(9), [2], [8]).set_start_batch(1)  # no start index


def test_count_batches_matches_brute_force():
    for sizes in ([3], [5, 2], [4, 2, 1], [1, 1, 7]):
        for n in range(40):
            for drop_last in (False, True):
                full, rest, i = 0, n, 0
                while rest >= sizes[i % len(sizes)]:
                    rest -= sizes[i % len(sizes)]
                    full, i = full + 1, i + 1
                expected = full + (1 if rest and not drop_last else 0)
                assert count_batches(n, sizes, drop_last) == expected, (sizes, n, drop_last)


def test_sampler_rejects_mismatched_cycles():
    with pytest.raises(ValueError, match="equal length"):
        ShortCycleBatchSampler(range(4), [2, 1], [8])
    with pytest.raises(ValueError, match="positive ints"):
        ShortCycleBatchSampler(range(4), [2, 0], [8, 16])


def test_split_index_reads_plain_and_short_cycle_indices():
    assert split_index(3) == (3, None)
    assert split_index(torch.tensor(5)) == (5, None)
    assert split_index(ShortCycleIndex(7, 11)) == (7, 11)


# ------------------------------------------------------------------- loader
class Clips(torch.utils.data.Dataset):
    def __init__(self, n: int = 30) -> None:
        self.n, self.frames, self.crop = n, 8, 16

    def set_multigrid_shape(self, frames: int, crop_size: int) -> None:
        self.frames, self.crop = frames, crop_size

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index):
        i, crop = split_index(index)
        crop = crop or self.crop
        return torch.full((1, self.frames, crop, crop), float(i))


def test_dataset_protocol_is_runtime_checkable():
    assert isinstance(Clips(), MultigridDataset)
    assert not isinstance(torch.utils.data.TensorDataset(torch.zeros(2)), MultigridDataset)


def test_multigrid_dataloader_keeps_the_template_and_sampler():
    dataset = Clips()
    sampler = DefaultSampler(dataset, shuffle=True, seed=3, rank=0, world_size=1)

    def collate(items):
        return torch.stack(items)

    template = DataLoader(dataset, batch_size=4, sampler=sampler, collate_fn=collate)
    stage = known_schedule().stages[0]  # cycle: 64x8, 32x11, 32x11 at 2 frames
    dataset.set_multigrid_shape(stage.shape.frames, stage.shape.crop_size)
    loader = multigrid_dataloader(template, sampler, stage, drop_last=False)
    assert loader.batch_sampler.sampler is sampler and loader.collate_fn is collate
    batches = list(loader)
    assert [tuple(b.shape) for b in batches] == [(30, 1, 2, 8, 8)]  # 30 < 64: one partial
    order = [int(v) for v in batches[0][:, 0, 0, 0, 0]]
    assert order == sampler.rank_indices().tolist()

    plain = multigrid_dataloader(template, sampler, known_schedule(short_cycle=False).stages[1],
                                 drop_last=True)  # fmt: skip
    assert plain.batch_size == 16 and plain.drop_last and plain.sampler is sampler
    assert len(plain) == 1
