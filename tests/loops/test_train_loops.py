"""Training loops resume exactly, in one process: an interrupted run continued from its
checkpoint ends where an uninterrupted one ends, validation leaves the random streams
alone, a validation due right after the checkpoint runs on resume, and resuming far
into a run loads only the next batches.

(The same contract with real SIGKILLs and fresh processes: tests/runner/test_resume_contract.py.)
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from runner_double import StandInRunner
from torch import nn
from torch.utils.data import Dataset

from cadence.dataset.multigrid import split_index
from cadence.hooks import Hook
from cadence.loops import BaseLoop
from cadence.model import BaseModel
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner

BATCH = 4


class Jittered(Dataset):
    """Fixed points plus noise from torch's, NumPy's and Python's global generators."""

    def __init__(self, n: int = 16, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.points = torch.randn(n, 4, generator=g)
        self.labels = torch.randint(0, 2, (n,), generator=g)
        self.fetched: list[int] = []

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, Any]:
        self.fetched.append(int(index))
        noise = 0.1 * torch.randn(4) + float(np.random.rand()) * 0.01 + random.random() * 0.01
        return {"inputs": self.points[index] + noise, "data_samples": self.labels[index]}


class DropoutNet(BaseModel):
    def __init__(self, data_preprocessor: Any = None) -> None:
        super().__init__(data_preprocessor=data_preprocessor)
        self.net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))

    def forward(self, inputs: Any, data_samples: Any = None, mode: str = "tensor") -> Any:
        logits = self.net(inputs)
        if mode == "loss":
            return {"loss": F.cross_entropy(logits, data_samples)}
        if mode == "predict":
            scores = logits.softmax(-1)
            return [{"pred_score": s, "gt_label": int(y)} for s, y in zip(scores, data_samples)]
        return logits


@pytest.fixture(autouse=True)
def _toys() -> None:
    DATASETS.register_module(module=Jittered, force=True)
    MODELS.register_module(module=DropoutNet, force=True)


class Interrupted(BaseException):
    """Stands for the process dying (raised past the runner, like a kill)."""


class StopBefore(Hook):
    """Interrupt the run just before iteration ``iteration``."""

    priority = "HIGHEST"

    def __init__(self, iteration: int) -> None:
        self.iteration = iteration

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        if runner.iter == self.iteration:
            raise Interrupted


class Record(Hook):
    """Losses of every iteration and the positions at which validation ran."""

    def __init__(self) -> None:
        self.losses: list[float] = []
        self.vals: list[tuple[int, int, float]] = []
        self.rng: torch.Tensor | None = None

    def after_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None,
                         outputs: Any = None) -> None:  # fmt: skip
        self.losses.append(float(outputs["loss"]))

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self.vals.append((runner.epoch, runner.iter, float((metrics or {})["accuracy/top1"])))

    def after_train(self, runner: Any) -> None:
        self.rng = torch.get_rng_state()


def loader(n: int = 16, seed: int = 0, sampler: str = "DefaultSampler", **kw: Any) -> dict:
    return dict(batch_size=BATCH, dataset=dict(type="Jittered", n=n, seed=seed),
                sampler=dict(type=sampler, shuffle=True), collate_fn=dict(type="default_collate"),
                **kw)  # fmt: skip


def config(work_dir: Any, name: str, val: bool = False, **overrides: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = dict(
        model=dict(type="DropoutNet"),
        work_dir=str(work_dir),
        experiment_name=name,
        train_dataloader=loader(),
        train_cfg=dict(by_epoch=True, max_epochs=3),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1, momentum=0.9)),
        default_hooks=dict(
            logger=dict(type="LoggerHook", progress="off"),
            checkpoint=dict(type="CheckpointHook", interval=3, by_epoch=False),
        ),
        randomness=dict(seed=11),
        log_level="WARNING",
    )
    if val:
        cfg.update(
            val_dataloader=loader(n=8, seed=1),  # its samples draw from the global generators
            val_cfg=dict(),
            val_evaluator=dict(type="Accuracy"),
        )
    cfg.update(overrides)
    return cfg


def train(cfg: dict[str, Any], stop_before: int | None = None) -> tuple[Runner, Record]:
    runner = Runner.from_cfg(cfg)
    record = Record()
    runner.register_hook(record)
    if stop_before is not None:
        runner.register_hook(StopBefore(stop_before))
        with pytest.raises(Interrupted):
            runner.train()
    else:
        runner.train()
    return runner, record


def assert_same_weights(a: Runner, b: Runner) -> None:
    for (key, x), y in zip(a.model.state_dict().items(), b.model.state_dict().values()):
        assert torch.equal(x, y), key


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


def test_resume_runs_the_validation_that_followed_the_checkpoint(tmp_path):
    hooks = dict(
        logger=dict(type="LoggerHook", progress="off"),
        checkpoint=dict(type="CheckpointHook", interval=1, by_epoch=True),
    )
    full, full_rec = train(config(tmp_path / "full", "full", val=True, default_hooks=hooks))
    # epoch_1.pth is written before epoch 1's validation; the run dies in epoch 2
    train(config(tmp_path / "part", "part", val=True, default_hooks=hooks), stop_before=6)
    resumed, resumed_rec = train(
        config(tmp_path / "part", "resumed", val=True, default_hooks=hooks, resume=True)
    )
    assert [v[:2] for v in full_rec.vals] == [(1, 4), (2, 8), (3, 12)]
    assert resumed_rec.vals == full_rec.vals  # epoch 1's validation ran again, first
    assert resumed_rec.losses == full_rec.losses[4:]
    assert_same_weights(full, resumed)


def test_a_checkpoint_without_a_pending_validation_does_not_validate_on_resume(tmp_path):
    overrides = dict(train_cfg=dict(by_epoch=True, max_epochs=3, val_interval=2))
    train(config(tmp_path / "part", "part", val=True, **overrides), stop_before=8)
    _, record = train(config(tmp_path / "part", "resumed", val=True, resume=True, **overrides))
    assert [v[:2] for v in record.vals] == [(2, 8), (3, 12)]  # iter_6.pth: no validation due


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
