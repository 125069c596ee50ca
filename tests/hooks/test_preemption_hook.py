"""PreemptionHook: SIGTERM/SIGUSR1 set a flag; the next iteration boundary saves and stops."""

from __future__ import annotations

import os
import signal

import pytest
import torch
from hook_toys import Line, Ramp, SignalAt, fake_scontrol, make_runner

from cadence.hooks import PreemptionHook
from cadence.registry import DATASETS, MODELS
from cadence.runner import Runner, find_latest_checkpoint


@pytest.fixture(autouse=True)
def _toys():
    DATASETS.register_module(module=Ramp, force=True)
    MODELS.register_module(module=Line, force=True)


@pytest.mark.parametrize("name", ["SIGTERM", "SIGUSR1"])
def test_signal_saves_at_the_next_boundary_and_ends_training(tmp_path, name):
    before = signal.getsignal(getattr(signal, name))
    runner = make_runner(tmp_path)
    probe = SignalAt(at=4, signum=getattr(signal, name))  # inside epoch 0 (6 iterations)
    runner.register_hook(probe)
    runner.train()
    assert probe.iters == 5  # the signalled iteration finishes, no further one starts
    assert runner.preempted is not None and runner.preempted.signal_name == name
    path = os.path.join(str(tmp_path), "preempted_iter_5.pth")
    assert runner.preempted.path == path and os.path.isfile(path)
    assert find_latest_checkpoint(str(tmp_path)) == path
    ckpt = torch.load(path, weights_only=True)
    assert ckpt["meta"]["iter"] == 5 and ckpt["meta"]["epoch"] == 0
    assert ckpt["loops"]["train"]["inner_iter"] == 5
    assert signal.getsignal(getattr(signal, name)) == before  # handlers given back


def test_resumed_run_continues_from_the_preemption_checkpoint(tmp_path):
    first = make_runner(tmp_path)
    first.register_hook(SignalAt(at=4, signum=signal.SIGTERM))
    first.train()
    again = make_runner(tmp_path)
    again._resume = True
    counter = SignalAt(at=-1, signum=signal.SIGTERM)
    again.register_hook(counter)
    again.train()
    assert again.preempted is None
    assert counter.iters == 18 - 5  # 3 epochs of 6 iterations, 5 done before the signal
    reference = make_runner(tmp_path / "reference")
    reference.train()
    for key, value in reference.model.state_dict().items():
        assert torch.equal(again.model.state_dict()[key], value), key


def test_signal_inside_an_accumulation_window_waits_for_the_optimizer_step(tmp_path):
    runner = make_runner(tmp_path, accumulate=4, by_epoch=False, max_iters=12)
    probe = SignalAt(at=1, signum=signal.SIGTERM)
    runner.register_hook(probe)
    runner.train()
    assert probe.iters == 4  # iterations 1..3 close the window that iteration 0 opened
    assert runner.preempted.path.endswith("preempted_iter_4.pth")


def test_no_signal_means_no_preemption_and_a_bad_config_is_named():
    with pytest.raises(ValueError, match="unknown signal 'SIGNOPE'"):
        PreemptionHook(signals=["SIGNOPE"])
    with pytest.raises(ValueError, match="sync_interval"):
        PreemptionHook(sync_interval=0)
    with pytest.raises(ValueError, match="grace_period must be > 0 seconds or None"):
        PreemptionHook(grace_period=0)
    with pytest.raises(ValueError, match="duplicate_window"):
        PreemptionHook(duplicate_window=-1)
    assert PreemptionHook().grace_period == 30 and PreemptionHook(grace_period=None)


def test_after_training_the_signal_behaves_as_before(tmp_path):
    seen = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: seen.append(signum))
    try:
        runner = make_runner(tmp_path)
        runner.train()
        assert runner.preempted is None
        os.kill(os.getpid(), signal.SIGUSR1)
        assert seen == [signal.SIGUSR1]
    finally:
        signal.signal(signal.SIGUSR1, previous)


def _preempt_one_rank(work_dir: str, path: str) -> tuple[int, str | None, int]:
    """Rank 1 alone gets SIGUSR1 before iteration 2, in a (stand-in) SLURM job: both ranks
    must stop together, and rank 0 requeue the job."""
    import torch.distributed as dist

    os.environ.update(SLURM_JOB_ID="4242", PATH=path)

    DATASETS.register_module(module=Ramp, force=True)
    MODELS.register_module(module=Line, force=True)
    runner = Runner(
        model=dict(type="Line"),
        work_dir=work_dir,
        train_dataloader=dict(
            batch_size=1, dataset=dict(type="Ramp", n=12), sampler=dict(type="DefaultSampler"),
            collate_fn=dict(type="default_collate"),
        ),
        train_cfg=dict(by_epoch=False, max_iters=10),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        default_hooks=dict(
            logger=dict(type="LoggerHook", progress="off"),
            preemption=dict(type="PreemptionHook", sync_interval=3),
        ),
        launcher="pytorch",
        log_level="WARNING",
    )  # fmt: skip
    probe = SignalAt(at=2 if dist.get_rank() == 1 else -1, signum=signal.SIGUSR1)
    runner.register_hook(probe)
    runner.train()
    path = runner.preempted.path if runner.preempted else None
    return probe.iters, path, runner.iter


@pytest.mark.dist
def test_ranks_agree_to_stop_when_only_one_got_the_signal_and_rank_0_requeues(tmp_path):
    from cadence.dist.testing import run_distributed

    path, calls = fake_scontrol(tmp_path / "slurm")
    work = str(tmp_path / "work")
    results = run_distributed(_preempt_one_rank, work, path, world_size=2, timeout=120)
    # the signal came before iteration 2; the ranks compare flags after iterations 3, 6, ...
    assert [r[0] for r in results] == [3, 3]
    assert results[0][1] == results[1][1] == os.path.join(work, "preempted_iter_3.pth")
    assert os.path.isfile(results[0][1])
    assert find_latest_checkpoint(work) == results[0][1]
    assert calls.read_text() == "requeue 4242\n"  # once, by rank 0, which learnt it was SIGUSR1
