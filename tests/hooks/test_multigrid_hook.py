"""MultigridHook: a video-like dataset trains through the schedule; shapes, LR and resume."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import Dataset

from cadence.dataset.multigrid import split_index
from cadence.dist.testing import run_distributed
from cadence.hooks import Hook, MultigridHook
from cadence.loops import EpochBasedTrainLoop
from cadence.model import BaseModel
from cadence.registry import DATASETS, LOOPS, MODELS
from cadence.runner import Runner

N = 128  # clips in the training set
BASE_LR = 0.01


class VideoClips(Dataset):
    """Clips of shape [C=1, T=8, 16, 16], resampled to the frames/crop the schedule asks for."""

    def __init__(self, n: int = N, frames: int = 8, size: int = 16) -> None:
        g = torch.Generator().manual_seed(0)
        self.labels = torch.randint(0, 2, (n,), generator=g)
        motion = torch.linspace(-1, 1, frames).view(1, frames, 1, 1)
        self.clips = torch.randn(n, 1, frames, size, size, generator=g) + motion * (
            2 * self.labels.view(n, 1, 1, 1, 1) - 1
        )
        self.frames, self.crop_size = frames, size
        self.fetched = 0  # samples loaded

    def set_multigrid_shape(self, frames: int, crop_size: int) -> None:
        self.frames, self.crop_size = frames, crop_size

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index):
        self.fetched += 1
        i, crop = split_index(index)
        crop = crop or self.crop_size
        clip = self.clips[i]
        t = torch.linspace(0, clip.shape[1] - 1, self.frames).round().long()
        clip = F.interpolate(clip[:, t], size=(crop, crop), mode="bilinear", align_corners=False)
        return {"inputs": clip, "data_samples": self.labels[i]}


class Flat(Dataset):
    def __len__(self) -> int:
        return 8

    def __getitem__(self, i):
        return {"inputs": torch.zeros(1, 2, 4, 4), "data_samples": torch.tensor(0)}


class TinyVideoNet(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(1, 4, 3, padding=1)  # over time, on spatial means: cheap
        self.head = nn.Linear(4, 2)

    def forward(self, inputs, data_samples=None, mode="tensor"):
        x = F.relu(self.conv(inputs.mean(dim=(3, 4)))).mean(dim=2)
        logits = self.head(x)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        return logits


class Recorder(Hook):
    """Per epoch: the LR, and (batch size, frames, crop) of every batch."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.shapes: dict[int, list[tuple[int, int, int]]] = {}
        self.lrs: dict[int, float] = {}

    def before_train_epoch(self, runner):
        self.lrs[runner.epoch] = runner.optim_wrapper.optimizer.param_groups[0]["lr"]

    def before_train_iter(self, runner, batch_idx, data_batch=None):
        b, _, t, h, w = data_batch["inputs"].shape
        assert h == w
        self.shapes.setdefault(runner.epoch, []).append((b, t, h))


@pytest.fixture(autouse=True)
def _toys():
    DATASETS.register_module(module=VideoClips, force=True)
    DATASETS.register_module(module=Flat, force=True)
    MODELS.register_module(module=TinyVideoNet, force=True)


def make_runner(work_dir, hook=None, checkpoint=None, **overrides):
    cfg = dict(
        model=dict(type="TinyVideoNet"),
        work_dir=str(work_dir),
        train_dataloader=dict(
            batch_size=4, dataset=dict(type="VideoClips"),
            sampler=dict(type="DefaultSampler", shuffle=True),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(max_epochs=12),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=BASE_LR, momentum=0.9)),
        custom_hooks=[hook or dict(type="MultigridHook", milestones=[4, 8], base_frames=8,
                                   base_crop_size=16)],
        randomness=dict(seed=3),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=1000),
            checkpoint=checkpoint or dict(type="CheckpointHook", interval=9),
        ),
    )  # fmt: skip
    cfg.update(overrides)
    runner = Runner(**cfg)
    recorder = Recorder()
    runner.register_hook(recorder)
    return runner, recorder


# The schedule of tests/dataset/test_multigrid.py's hand-computed table (base batch 4, 8
# frames, crop 16, LR x0.1 at epochs 4 and 8 of 12, epoch factor 1.5): per stage, its end
# epoch, frames, and the (batch, crop) pairs of its short cycle; and the LR per epoch.
STAGES = [
    (3, 2, [(64, 8), (32, 11), (32, 11)]),
    (5, 4, [(32, 8), (16, 11), (16, 11)]),
    (7, 4, [(32, 8), (16, 11), (8, 16)]),
    (11, 2, [(64, 8), (32, 11), (32, 11)]),
    (13, 4, [(32, 8), (16, 11), (16, 11)]),
    (14, 4, [(32, 8), (16, 11), (8, 16)]),
    (18, 8, [(16, 8), (8, 11), (4, 16)]),
]
LR_FACTORS = [8] * 3 + [4] * 2 + [2] * 2 + [0.8] * 4 + [0.4] * 2 + [0.2, 0.1, 0.1, 0.01, 0.01]


# A short schedule (LR x0.1 at epoch 2 of 3, epoch factor 1), by hand as in
# tests/dataset/test_multigrid.py: shape epochs 2 * (32, 16, 14, 7) / 69, fine-tuning
# (3 - 2) * (7/3) / (23/4); scaled to 3 epochs the stage ends are 1, 2, 2, 2 and 3.
SHORT_HOOK = dict(type="MultigridHook", milestones=[2], base_frames=8, base_crop_size=16,
                  epoch_factor=1.0)  # fmt: skip
SHORT_STAGES = [
    (1, 2, [(64, 8), (32, 11), (32, 11)]),
    (2, 4, [(32, 8), (16, 11), (16, 11)]),
    (3, 8, [(16, 8), (8, 11), (4, 16)]),
]


def expected_epoch(epoch: int, stages=STAGES, n: int = N) -> list[tuple[int, int, int]]:
    """The batches one epoch of ``n`` clips makes at the stage of ``epoch`` (by hand)."""
    end, frames, cycle = next(s for s in stages if epoch < s[0])
    batches, left, i = [], n, 0
    while left > 0:
        size, crop = cycle[i % len(cycle)]
        batches.append((min(size, left), frames, crop))
        left, i = left - size, i + 1
    return batches


def params(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


class Probe(Hook):
    """Which sampler object each epoch's loader uses, and the epoch it was set to."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.seen: list[tuple[int, int]] = []

    def before_train_epoch(self, runner):
        sampler = runner.train_loop.dataloader.batch_sampler.sampler
        self.seen.append((id(sampler), sampler.epoch))


def test_training_follows_the_schedule_shapes_lr_and_length(tmp_path):
    runner, recorder = make_runner(tmp_path)
    probe = Probe()
    runner.register_hook(probe)
    runner.train()
    assert runner.max_epochs == 18
    assert sorted(recorder.shapes) == list(range(18))
    for epoch in range(18):
        assert recorder.shapes[epoch] == expected_epoch(epoch), epoch
    assert runner.max_iters == runner.iter == sum(len(expected_epoch(e)) for e in range(18))
    assert [recorder.lrs[e] for e in range(18)] == pytest.approx([BASE_LR * f for f in LR_FACTORS])
    assert len({s for s, _ in probe.seen}) == 1  # the configured sampler object, kept
    assert [e for _, e in probe.seen] == list(range(18))  # DistSamplerSeedHook reached it

    hook = next(h for h in runner.hooks if isinstance(h, MultigridHook))
    assert hook.state_dict()["base_lrs"] == [BASE_LR]
    ckpt = torch.load(os.path.join(str(tmp_path), "epoch_9.pth"), weights_only=True)
    saved = ckpt["hooks"]["MultigridHook"]
    assert saved["base_lrs"] == [BASE_LR]
    assert [row[2] for row in saved["schedule"]] == [3, 5, 7, 7, 11, 13, 14, 15, 18]


@pytest.mark.slow
def test_resume_at_an_epoch_and_mid_epoch_continues_the_same_shapes_and_weights(tmp_path, recwarn):
    every5 = dict(type="CheckpointHook", interval=5, by_epoch=False)
    full, full_rec = make_runner(
        tmp_path / "full", checkpoint=every5,
        custom_hooks=[dict(type="MultigridHook", milestones=[4, 8], base_frames=8,
                           base_crop_size=16), dict(type="CheckpointHook", interval=7)],
    )  # fmt: skip
    full.train()
    final = params(full.model)

    # at the end of epoch 14, past the configured 12 epochs (the hook lengthens the loop)
    ckpt = os.path.join(str(tmp_path / "full"), "epoch_14.pth")
    resumed, rec = make_runner(tmp_path / "at_epoch", resume=ckpt)
    resumed.train()
    assert sorted(rec.shapes) == list(range(14, 18))
    assert rec.shapes == {e: full_rec.shapes[e] for e in rec.shapes}
    assert rec.lrs == {e: full_rec.lrs[e] for e in rec.lrs}
    assert resumed.max_iters == full.max_iters and resumed.iter == full.iter
    assert all(torch.equal(final[k], v) for k, v in params(resumed.model).items())

    # after 5 iterations: epoch 0 has 3 batches, so 2 batches into epoch 1's short cycle
    ckpt = os.path.join(str(tmp_path / "full"), "iter_5.pth")
    resumed, rec = make_runner(tmp_path / "mid_epoch", resume=ckpt)
    resumed.train()
    assert not [w for w in recwarn if "replaying" in str(w.message)]  # started mid-cycle
    assert rec.shapes[1] == full_rec.shapes[1][2:]
    assert all(rec.shapes[e] == full_rec.shapes[e] for e in range(2, 18))
    assert all(torch.equal(final[k], v) for k, v in params(resumed.model).items())
    trained = sum(b for epoch in rec.shapes.values() for b, _, _ in epoch)
    assert resumed.train_loop.dataloader.dataset.fetched == trained  # nothing loaded twice


@pytest.mark.slow
def test_long_cycles_only_use_plain_batches_and_resume_mid_epoch_exactly(tmp_path, recwarn):
    # by hand, as above with batch factors 8, 4, 2, 1 (sum 15) and epoch factor 2: stage
    # ends 6 * cumsum(2 * (8, 4, 2, 1) / 15, 1 * 1 / (15 / 4)) / 2.267 -> 3, 4, 5, 5, 6
    hook = dict(SHORT_HOOK, short_cycle=False, epoch_factor=2.0)
    stages = [(3, 2, [(32, 11)]), (4, 4, [(16, 11)]), (5, 4, [(8, 16)]), (6, 8, [(4, 16)])]
    every7 = dict(type="CheckpointHook", interval=7, by_epoch=False)
    full, full_rec = make_runner(
        tmp_path / "full", hook=hook, checkpoint=every7, train_cfg=dict(max_epochs=3)
    )
    full.train()
    assert full_rec.shapes == {e: expected_epoch(e, stages) for e in range(6)}
    # after 14 iterations: epochs 0-2 have 4 batches each, so 2 batches into epoch 3
    ckpt = os.path.join(str(tmp_path / "full"), "iter_14.pth")
    resumed, rec = make_runner(
        tmp_path / "resumed", hook=hook, train_cfg=dict(max_epochs=3), resume=ckpt
    )
    resumed.train()
    assert not [w for w in recwarn if "replaying" in str(w.message)]  # started mid-epoch
    assert rec.shapes[3] == full_rec.shapes[3][2:]
    assert all(rec.shapes[e] == full_rec.shapes[e] for e in (4, 5))
    a, b = params(full.model), params(resumed.model)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_set_lr_false_leaves_the_learning_rate_to_the_schedulers(tmp_path):
    hook = dict(SHORT_HOOK, set_lr=False)
    runner, recorder = make_runner(
        tmp_path,
        hook=hook,
        train_cfg=dict(max_epochs=3),
        param_scheduler=dict(type="ConstantLR", factor=0.5, end=100),
    )
    runner.train()
    assert list(recorder.lrs.values()) == pytest.approx([BASE_LR * 0.5] * runner.max_epochs)
    assert recorder.shapes == {e: expected_epoch(e, SHORT_STAGES) for e in range(3)}


def test_the_loop_and_the_optimizer_wrapper_count_the_schedules_iterations(tmp_path):
    runner, recorder = make_runner(tmp_path, hook=SHORT_HOOK, train_cfg=dict(max_epochs=3))
    runner.train()
    iterations = sum(len(expected_epoch(e, SHORT_STAGES)) for e in range(3))
    assert runner.iter == runner.max_iters == iterations  # not 3 epochs of the configured 32
    assert runner.optim_wrapper.max_counts == iterations  # its last accumulation window


class FixedLengthLoop(EpochBasedTrainLoop):
    """An epoch loop whose length cannot be changed (one written before set_length)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.set_length = None


def test_a_loop_without_set_length_is_named(tmp_path):
    LOOPS.register_module(module=FixedLengthLoop, force=True)
    runner, _ = make_runner(tmp_path, train_cfg=dict(type="FixedLengthLoop", max_epochs=3))
    with pytest.raises(TypeError, match="FixedLengthLoop has no set_length"):
        runner.train()


def test_schedulers_beside_set_lr_are_refused(tmp_path):
    runner, _ = make_runner(tmp_path, param_scheduler=dict(type="MultiStepLR", milestones=[4]))
    with pytest.raises(ValueError, match="remove param_scheduler"):
        runner.train()


def test_a_dataset_without_the_protocol_is_named(tmp_path):
    loader = dict(batch_size=2, dataset=dict(type="Flat"),
                  sampler=dict(type="DefaultSampler", shuffle=False))  # fmt: skip
    runner, _ = make_runner(tmp_path, train_dataloader=loader)
    with pytest.raises(TypeError, match="Flat does not implement set_multigrid_shape"):
        runner.train()


def test_bad_schedule_arguments_fail_when_the_hook_is_built():
    with pytest.raises(ValueError, match="MultigridHook: milestones must be increasing"):
        MultigridHook(milestones=[8, 4], base_frames=8, base_crop_size=16)
    with pytest.raises(ValueError, match="before max_epochs"):
        MultigridHook(milestones=[4, 8], base_frames=8, base_crop_size=16, max_epochs=8)
    with pytest.raises(ValueError, match="base_crop_size"):
        MultigridHook(milestones=[4], base_frames=8, base_crop_size=0)
    with pytest.raises(ValueError, match="base_batch_size must be a positive int"):
        MultigridHook(milestones=[4], base_frames=8, base_crop_size=16, base_batch_size=0)


def test_an_iteration_loop_is_refused(tmp_path):
    runner, _ = make_runner(tmp_path, train_cfg=dict(max_iters=10))
    with pytest.raises(ValueError, match="epoch-based train loop"):
        runner.train()


def _train_on_two_ranks(work_dir: str) -> dict:
    DATASETS.register_module(module=VideoClips, force=True)
    MODELS.register_module(module=TinyVideoNet, force=True)
    runner, recorder = make_runner(
        work_dir, hook=SHORT_HOOK, train_cfg=dict(max_epochs=3), launcher="pytorch",
        strategy=dict(type="DDPStrategy"),
    )  # fmt: skip
    runner.train()
    weights = {k: v.detach().cpu().numpy().copy() for k, v in params(runner.model).items()}
    return dict(shapes=recorder.shapes, max_iters=runner.max_iters, weights=weights)


@pytest.mark.dist
@pytest.mark.slow
def test_two_ranks_each_follow_the_schedule_on_their_shard(tmp_path):
    results = run_distributed(_train_on_two_ranks, str(tmp_path), timeout=300)
    for result in results:  # 64 clips per rank
        assert result["shapes"] == {e: expected_epoch(e, SHORT_STAGES, N // 2) for e in range(3)}
        assert result["max_iters"] == sum(
            len(expected_epoch(e, SHORT_STAGES, 64)) for e in range(3)
        )
    r0, r1 = results
    assert all((r0["weights"][k] == r1["weights"][k]).all() for k in r0["weights"])
