"""Training loops resume exactly, in one process: an interrupted run continued from its
checkpoint ends where an uninterrupted one ends, validation leaves the random streams
alone, and resuming far into a run loads only the next batches (the validation that
followed a checkpoint: test_resume_validation.py).

(The same contract with real SIGKILLs and fresh processes: tests/runner/test_resume_contract.py.)
"""

from __future__ import annotations

import random
from typing import Any

import pytest
import torch
from loop_toys import (
    BATCH,
    DropoutNet,
    Jittered,
    Record,
    assert_same_weights,
    config,
    loader,
    register_toys,
    train,
)
from runner_double import StandInRunner

from cadence.dataset.multigrid import split_index
from cadence.hooks import Hook
from cadence.loops import BaseLoop
from cadence.registry import DATASETS, MODELS
from cadence.resilience.heartbeat import HOOK
from cadence.runner import Runner


@pytest.fixture(autouse=True)
def _toys() -> None:
    register_toys()


@pytest.mark.parametrize(
    "overrides",
    [
        {},  # epoch loop, interrupted mid-epoch, resumed from a mid-epoch checkpoint
        dict(train_cfg=dict(type="IterBasedTrainLoop", max_iters=12)),
        dict(
            train_dataloader=loader(sampler="InfiniteSampler"),
            train_cfg=dict(type="IterBasedTrainLoop", max_iters=12),
        ),
    ],  # fmt: skip
    ids=["epoch", "iter-default-sampler", "iter-infinite-sampler"],
)
def test_interrupted_run_resumes_to_the_same_weights(tmp_path, overrides):
    full, full_rec = train(config(tmp_path / "full", "full", **overrides))
    train(config(tmp_path / "part", "part", **overrides), stop_before=8)
    resumed, resumed_rec = train(config(tmp_path / "part", "resumed", resume=True, **overrides))
    assert resumed_rec.losses == full_rec.losses[6:]  # resumed from iter_6 (mid epoch 1)
    assert_same_weights(full, resumed)
    assert torch.equal(full_rec.rng, resumed_rec.rng)  # every draw happened as in one run
    fetched = resumed.train_dataloader.dataset.fetched
    assert len(fetched) == (12 - 6) * BATCH  # nothing loaded twice


def test_a_run_with_a_drawn_seed_resumes_with_its_own_data_order_and_worker_seeds(tmp_path):
    overrides = dict(
        train_dataloader=loader(sampler="InfiniteSampler", num_workers=2),
        train_cfg=dict(type="IterBasedTrainLoop", max_iters=12),
    )
    part, _ = train(config(tmp_path / "part", "part", randomness={}, **overrides), stop_before=8)
    drawn = part.seed  # randomness.seed unset: drawn at random, differently in each process
    full, full_rec = train(
        config(tmp_path / "full", "full", randomness=dict(seed=drawn), **overrides)
    )
    resumed, resumed_rec = train(
        config(tmp_path / "part", "resumed", randomness={}, resume=True, **overrides)
    )
    assert resumed.seed != drawn
    assert resumed_rec.losses == full_rec.losses[6:]
    assert_same_weights(full, resumed)


def test_validation_during_training_leaves_the_random_streams_alone(tmp_path):
    with_val, _ = train(config(tmp_path / "a", "a", val=True))
    without, _ = train(config(tmp_path / "b", "b"))
    assert_same_weights(with_val, without)  # validation drew numbers, training did not notice


class JumpTo(Hook):
    """Move a fresh run far ahead, as a resume from a late checkpoint would."""

    def __init__(self, iteration: int) -> None:
        self.iteration = iteration

    def before_train(self, runner: Any) -> None:
        runner.train_loop.load_state_dict(
            {"epoch": 0, "iter": self.iteration, "inner_iter": self.iteration}
        )


@pytest.mark.parametrize("sampler", ["InfiniteSampler", "DefaultSampler"])
def test_resuming_far_into_a_run_loads_only_the_next_batches(tmp_path, sampler):
    far = 100_000
    cfg = config(
        tmp_path, "far", train_dataloader=loader(sampler=sampler),
        train_cfg=dict(type="IterBasedTrainLoop", max_iters=far + 2),
        default_hooks=dict(logger=dict(type="LoggerHook", progress="off"), checkpoint=None),
    )  # fmt: skip
    runner = Runner.from_cfg(cfg)
    runner.register_hook(JumpTo(far))
    runner.train()
    fetched = runner.train_dataloader.dataset.fetched
    # the stream (independently computed): permutation k of the 16 samples is drawn from
    # seed + k (DefaultSampler's epoch k), or is the k-th drawn from one generator seeded
    # with the seed (mmengine's InfiniteSampler)
    seed, n = runner.seed, 16
    position = far * BATCH
    generator = torch.Generator().manual_seed(seed)
    orders = [
        torch.randperm(n, generator=generator if sampler == "InfiniteSampler"
                       else torch.Generator().manual_seed(seed + k))
        for k in range(position // n + 2)
    ]  # fmt: skip
    expected = []
    for p in range(position, position + 2 * BATCH):
        k, offset = divmod(p, n)
        expected.append(int(orders[k][offset]))
    assert fetched == expected


class CroppedJittered(Jittered):
    """Jittered whose indices may come as a short cycle's ``(index, crop_size)``."""

    def __getitem__(self, index: Any) -> dict[str, Any]:
        return super().__getitem__(split_index(index)[0])


def test_a_batch_sampler_that_starts_mid_epoch_resumes_without_replaying(tmp_path, recwarn):
    DATASETS.register_module(module=CroppedJittered, force=True)
    cycles = dict(
        dataset=dict(type="CroppedJittered"), sampler=dict(type="DefaultSampler", shuffle=True),
        batch_sampler=dict(type="ShortCycleBatchSampler", batch_sizes=[4, 2], crop_sizes=[1, 1]),
        collate_fn=dict(type="default_collate"),
    )  # fmt: skip
    # 16 samples in batches of 4, 2, 4, 2, 4: iter_6.pth is 1 batch (4 samples) into epoch 1
    full, full_rec = train(config(tmp_path / "full", "full", train_dataloader=cycles))
    train(config(tmp_path / "part", "part", train_dataloader=cycles), stop_before=8)
    resumed, resumed_rec = train(
        config(tmp_path / "part", "resumed", train_dataloader=cycles, resume=True)
    )
    assert not [w for w in recwarn if "replaying" in str(w.message)]
    assert resumed_rec.losses == full_rec.losses[6:]
    assert_same_weights(full, resumed)
    assert resumed.train_dataloader.dataset.fetched == full.train_dataloader.dataset.fetched[20:]


class Lengthen(Hook):
    """Set the loop's length in ``before_train``, as MultigridHook does."""

    priority = "HIGHEST"

    def __init__(self, **length: int) -> None:
        self.length = length
        self.params: dict[int, list[torch.Tensor]] = {}

    def before_train(self, runner: Any) -> None:
        runner.train_loop.set_length(**self.length)

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        self.params[runner.iter + 1] = [p.detach().clone() for p in runner.model.parameters()]


def test_set_length_in_before_train_sets_the_epochs_and_iterations_trained(tmp_path):
    runner = Runner.from_cfg(config(tmp_path, "epochs"))  # 3 epochs of 4 batches configured
    runner.register_hook(Lengthen(max_epochs=2))
    runner.train()
    assert (runner.epoch, runner.iter, runner.max_epochs, runner.max_iters) == (2, 8, 2, 8)

    runner = Runner.from_cfg(config(tmp_path / "uneven", "uneven"))  # a work dir of its own
    runner.register_hook(Lengthen(max_epochs=4, max_iters=15))  # epochs of different lengths
    runner.train()
    assert (runner.epoch, runner.max_epochs, runner.max_iters) == (4, 4, 15)


def test_a_longer_loop_is_counted_by_the_optimizer_wrapper(tmp_path):
    # 8 iterations configured with 4-step accumulation, lengthened to 10 in before_train:
    # iterations 9-10 form a last, short window that must still update the weights
    cfg = config(
        tmp_path, "accumulate", train_cfg=dict(type="IterBasedTrainLoop", max_iters=8),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1), accumulative_counts=4),
    )  # fmt: skip
    runner = Runner.from_cfg(cfg)
    hook = Lengthen(max_iters=10)
    runner.register_hook(hook)
    runner.train()
    assert runner.iter == runner.optim_wrapper.max_counts == 10
    assert all(torch.equal(a, b) for a, b in zip(hook.params[8], hook.params[9]))  # mid-window
    assert not any(torch.equal(a, b) for a, b in zip(hook.params[8], hook.params[10]))


def test_set_length_refuses_what_the_loop_cannot_count(tmp_path):
    cfg = config(tmp_path, "iters", train_cfg=dict(type="IterBasedTrainLoop", max_iters=8))
    loop = Runner.from_cfg(cfg).train_loop
    with pytest.raises(ValueError, match="set max_iters, not max_epochs"):
        loop.set_length(max_epochs=2)
    with pytest.raises(ValueError, match="max_iters must be a positive int"):
        loop.set_length(max_iters=0)
    loop.set_length(max_iters=5)
    assert loop.max_iters == 5
    with pytest.raises(ValueError, match="max_epochs must be a positive int"):
        Runner.from_cfg(config(tmp_path, "epochs")).train_loop.set_length(max_epochs=True)


# ------------------------------------------------- when validation is due
def _validating_runner() -> StandInRunner:
    """Just enough runner for a loop to decide when it validates: one with a validation loop."""
    runner = StandInRunner()
    runner.val_loop = BaseLoop(runner, torch.utils.data.DataLoader(range(2)))
    return runner


def test_the_next_validation_is_the_first_position_where_one_is_due():
    for seed in range(200):
        _check_next_validation(random.Random(seed))


def _check_next_validation(rng: random.Random) -> None:
    from cadence.loops import IterBasedTrainLoop

    begin = rng.randint(1, 12)
    milestones = sorted(rng.sample(range(begin, 40), rng.randint(0, 3)))
    dynamic = [(m, rng.randint(1, 9)) for m in milestones]
    runner = _validating_runner()
    loop = IterBasedTrainLoop(runner, torch.utils.data.DataLoader(range(4)), max_iters=5,
                              val_begin=begin, val_interval=rng.randint(1, 9),
                              dynamic_intervals=dynamic)  # fmt: skip
    last = rng.randint(1, 45)
    for after in range(0, last + 1):
        due = [p for p in range(after + 1, last + 1) if loop._val_due(p, last)]
        assert loop._next_val(after, last) == (due[0] if due else last + 1), (after, last)


def test_an_iteration_loop_validates_at_the_same_iterations_with_dynamic_intervals(tmp_path):
    """Validation at 5, 10 (interval 5), then every 2 from iteration 12, and at the end (17)."""
    cfg = config(tmp_path, "dyn", val=True,
                 train_cfg=dict(type="IterBasedTrainLoop", max_iters=17, val_begin=5,
                                val_interval=5, dynamic_intervals=[(11, 2)]))  # fmt: skip
    _, record = train(cfg)
    assert [it for _, it, _ in record.vals] == [5, 10, 12, 14, 16, 17]


def test_an_iteration_loop_over_an_empty_dataloader_says_so(tmp_path):
    cfg = config(tmp_path, "empty", train_cfg=dict(type="IterBasedTrainLoop", max_iters=3),
                 train_dataloader=loader(n=2, drop_last=True))  # fmt: skip
    cfg["train_dataloader"]["batch_size"] = 4
    with pytest.raises(RuntimeError, match="yields no batches"):
        train(cfg)


# ------------------------------------------------------ hooks per iteration
class Boom(Hook):
    def __init__(self, stage: str) -> None:
        self.stage = stage

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        if self.stage == "before_train_iter":
            raise KeyError("boom")

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        if self.stage == "after_train_iter":
            raise KeyError("boom")


@pytest.mark.parametrize("stage", ["before_train_iter", "after_train_iter"])
def test_a_hook_failing_in_an_iteration_is_named_with_its_stage(tmp_path, stage):
    runner = Runner.from_cfg(config(tmp_path, "boom", train_cfg=dict(type="IterBasedTrainLoop",
                                                                     max_iters=3)))  # fmt: skip
    runner.register_hook(Boom(stage))
    with pytest.raises(KeyError) as info:
        runner.train()
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "'Boom'" in notes and stage in notes


class ValBoom(Hook):
    def __init__(self, stage: str) -> None:
        self.stage = stage

    def before_val_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        if self.stage == "before_val_iter":
            raise KeyError("boom")

    def after_val_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                       outputs: Any = None) -> None:  # fmt: skip
        if self.stage == "after_val_iter" and outputs is not None:
            raise KeyError("boom")


@pytest.mark.parametrize("stage", ["before_val_iter", "after_val_iter"])
def test_a_hook_failing_in_a_validation_iteration_is_named_with_its_stage(tmp_path, stage):
    runner = Runner.from_cfg(config(tmp_path, "valboom", val=True))
    runner.register_hook(ValBoom(stage))
    with pytest.raises(KeyError) as info:
        runner.val()
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "'ValBoom'" in notes and stage in notes


class FailingNet(DropoutNet):
    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        raise KeyError("model")


def test_a_model_failing_in_an_iteration_is_not_blamed_on_a_hook(tmp_path):
    MODELS.register_module(module=FailingNet, force=True)
    runner = Runner.from_cfg(config(tmp_path, "model", model=dict(type="FailingNet")))
    with pytest.raises(KeyError) as info:
        runner.train()
    assert not getattr(info.value, "__notes__", [])


class AddsAHook(Hook):
    """Registers another hook when training starts."""

    def __init__(self, added: Record) -> None:
        self.added = added

    def before_train(self, runner: Any) -> None:
        runner.register_hook(self.added)


def test_a_hook_registered_when_training_starts_is_called_every_iteration(tmp_path):
    runner = Runner.from_cfg(config(tmp_path, "late", train_cfg=dict(type="IterBasedTrainLoop",
                                                                     max_iters=5)))  # fmt: skip
    late = Record()
    runner.register_hook(AddsAHook(late))
    runner.train()
    assert len(late.losses) == 5


def test_a_loop_overriding_run_takes_batches_as_mmengines_loops_do(tmp_path):
    from cadence.loops import IterBasedTrainLoop
    from cadence.registry import LOOPS

    @LOOPS.register_module(force=True)
    class OwnRun(IterBasedTrainLoop):  # mmengine's way: next(dataloader_iterator), run_iter(b)
        def run(self):
            self.runner.call_hook("before_train")
            while self.runner.iter < self.max_iters:
                self.run_iter(next(self.dataloader_iterator))
            self.runner.call_hook("after_train")

    cfg = config(tmp_path, "own", train_cfg=dict(type="OwnRun", max_iters=6))
    runner, record = train(cfg)
    assert runner.iter == 6
    assert runner.train_loop.dataloader_iterator.epoch == 1  # 16 samples, 4 a batch


# ------------------------------------------- what a hook sees at each step
class SeesEachStep(Hook):
    """At each per-iteration stage: the position, the message hub's per-iteration records
    (as an mmengine hook reads them) and where the heartbeat says the step is."""

    priority = "LOWEST"

    def __init__(self) -> None:
        self.records: list[tuple[Any, ...]] = []
        self.beats: list[tuple[int, int, bool]] = []

    def _beat(self, runner: Any, fn: Any) -> None:
        beat = runner.heartbeat
        self.beats.append((beat.steps, beat.phase, beat.hook == fn))

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        hub = runner.message_hub
        self.records.append(("before", batch_idx, runner.iter, hub.get_info("iter"),
                             hub.get_scalar("train/lr").current(),
                             len(hub.get_scalar("train/data_time"))))  # fmt: skip
        self._beat(runner, self.before_train_iter)

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        hub = runner.message_hub
        loss = outputs["loss"].item()
        self.records.append(("after", batch_idx, runner.iter, loss,
                             hub.get_scalar("train/loss").current() == loss,
                             len(hub.get_scalar("train/loss")), len(hub.get_scalar("train/time")),
                             hub.get_info("eta") is not None))  # fmt: skip
        self._beat(runner, self.after_train_iter)


@pytest.mark.parametrize("loop", ["EpochBasedTrainLoop", "IterBasedTrainLoop"])
def test_a_step_under_a_hang_watchdog_makes_the_same_calls_and_records_and_marks_the_heartbeat(
    tmp_path, loop
):
    """Without a watchdog the loop runs its steps unmarked; with one (hang_timeout set, one
    process) it marks the heartbeat. Either way the hooks see the same calls, losses to the
    bit and the message hub's records of every iteration."""
    length = dict(max_epochs=2) if loop == "EpochBasedTrainLoop" else dict(max_iters=8)
    seen = []
    for name, env in (("plain", {}), ("watched", dict(dist_cfg=dict(hang_timeout=600)))):
        cfg = config(tmp_path / name, name, train_cfg=dict(type=loop, **length), env_cfg=env)
        runner = Runner.from_cfg(cfg)
        hook = SeesEachStep()
        runner.register_hook(hook)
        runner.train()
        assert runner.heartbeat.watchers == 0  # the watchdog stopped with training
        seen.append(hook)
    plain, watched = seen
    assert plain.records == watched.records and len(plain.records) == 16
    last_batch = 3 if loop == "EpochBasedTrainLoop" else 7  # an iteration loop counts on
    assert plain.records[-1] == ("after", last_batch, 7, plain.records[-1][3], True, 8, 8, True)
    # the marked steps: steps + 1 when a step begins; in a hook, the hook's function runs
    assert watched.beats == [(2 * (i // 2) + 1, HOOK, True) for i in range(16)]
    assert all(steps == 0 for steps, _, _ in plain.beats)  # unwatched: no marks
