"""Per-step metrics from all ranks (detectron2's convention), and only when a line is logged.

Two gloo ranks log through a real ``LoggerHook`` and ``LogProcessor`` with
different losses and data times: every rank's line shows the mean loss and the
maximum data time, and collectives run on logging iterations only.
"""

from __future__ import annotations

import types

import pytest
import torch.distributed as dist

from cadence.dist.testing import run_distributed

_COLLECTIVES = (
    "all_reduce", "all_gather", "all_gather_object", "all_gather_into_tensor", "broadcast",
    "broadcast_object_list", "reduce", "reduce_scatter", "gather", "scatter", "barrier",
)  # fmt: skip
INTERVAL = 5
ITERS = 12


def _loss(rank: int, it: int) -> float:
    return 1.0 + 2.0 * rank + 0.1 * it


def _data_time(rank: int, it: int) -> float:
    return 0.01 * (rank + 1) * (1 + it % 3)


def _log_with_counted_collectives() -> dict:
    """Feed the message hub per iteration as the timer/runtime hooks do; count collectives."""
    from runner_double import StandInRunner

    from cadence.hooks import LoggerHook
    from cadence.hooks import log_processor as module
    from cadence.hooks.log_processor import LogProcessor
    from cadence.logging import MessageHub

    module._max_cuda_memory_mb = lambda runner: None
    rank, world = dist.get_rank(), dist.get_world_size()
    calls: list[tuple[int, str]] = []
    current = {"iter": -1}

    def counted(name, fn):
        def wrapper(*args, **kwargs):
            calls.append((current["iter"], name))
            return fn(*args, **kwargs)

        return wrapper

    for name in _COLLECTIVES:
        if hasattr(dist, name):
            setattr(dist, name, counted(name, getattr(dist, name)))

    lines: list[str] = []
    hub = MessageHub(f"ranks{rank}")
    hub.update_info("eta", 10)
    loop = types.SimpleNamespace(dataloader=[0] * ITERS, val_interval=0)
    runner = StandInRunner(
        iter=0, epoch=0, max_iters=ITERS, max_epochs=1, train_loop=loop, val_loop=None,
        message_hub=hub, world_size=world, rank=rank, experiment_name="ranks",
        train_loop_by_epoch=False, log_processor=LogProcessor(by_epoch=False, window_size=1),
        logger=types.SimpleNamespace(info=lines.append),
        visualizer=types.SimpleNamespace(add_scalars=lambda tag, step, **kwargs: None),
    )  # fmt: skip
    hook = LoggerHook(interval=INTERVAL, progress="off", interval_exp_name=0)
    hook.before_run(runner)
    hook.before_train(runner)
    for it in range(ITERS):
        runner.iter = it
        current["iter"] = it
        hub.update_scalar("train/loss", _loss(rank, it))
        hub.update_scalar("train/data_time", _data_time(rank, it))
        hub.update_scalar("train/time", 0.5 + rank)
        hub.update_scalar("train/lr", 0.1)
        hook.after_train_iter(runner, it)
    # the iteration lines (before_train also logs the run's start lines)
    return {"calls": calls, "lines": [line for line in lines if line.startswith("Iter(train)")]}


@pytest.mark.dist
def test_logged_losses_are_the_mean_and_data_time_the_max_over_ranks():
    results = run_distributed(_log_with_counted_collectives, timeout=60)
    logged = [it for it in range(ITERS) if (it + 1) % INTERVAL == 0]
    for result in results:
        # one collective per logged line, none on the other iterations
        assert result["calls"] == [(it, "all_gather") for it in logged]
        assert len(result["lines"]) == len(logged)
        for line, it in zip(result["lines"], logged):
            mean_loss = sum(_loss(r, it) for r in range(2)) / 2
            max_data = max(_data_time(r, it) for r in range(2))
            assert f"loss: {mean_loss:.4f}" in line
            assert f"data_time: {max_data:.4f}" in line
    # 'time' is each rank's own
    assert "time: 0.5000" in results[0]["lines"][0]
    assert "time: 1.5000" in results[1]["lines"][0]
