"""With two ranks the logged losses are the mean over ranks; other values stay per rank."""

from __future__ import annotations

import types

import pytest

from cadence.dist.testing import run_distributed


def _log_after_iter() -> dict:
    """Run inside each of 2 ranks: what the log processor reports for this rank's hub."""
    import torch.distributed as dist
    from runner_double import StandInRunner

    from cadence.hooks import log_processor as module
    from cadence.hooks.log_processor import LogProcessor
    from cadence.logging import MessageHub

    module._max_cuda_memory_mb = lambda runner: None
    rank, world_size = dist.get_rank(), dist.get_world_size()
    hub = MessageHub("dist")
    hub.update_scalar("train/loss", 1.0 + 2 * rank)  # rank 0: 1, rank 1: 3
    hub.update_scalar("train/loss_aux", 10.0 * (rank + 1))  # 10 and 20
    hub.update_scalar("train/time", 0.1 * (rank + 1))
    hub.update_scalar("train/acc", float(rank))
    loop = types.SimpleNamespace(dataloader=[0] * 4)
    runner = StandInRunner(
        iter=0, epoch=0, max_iters=4, max_epochs=1, train_loop=loop, val_loop=loop,
        test_loop=loop, message_hub=hub, world_size=world_size, rank=rank,
    )  # fmt: skip
    tag, line = LogProcessor().get_log_after_iter(runner, 0, "train")
    return {"tag": dict(tag), "line": line}


@pytest.mark.dist
def test_losses_are_averaged_over_ranks():
    results = run_distributed(_log_after_iter, timeout=60)
    for rank, result in enumerate(results):
        assert result["tag"]["loss"] == 2.0  # (1 + 3) / 2
        assert result["tag"]["loss_aux"] == 15.0  # (10 + 20) / 2
        assert result["tag"]["time"] == pytest.approx(0.1 * (rank + 1))  # not averaged
        assert result["tag"]["acc"] == float(rank)  # not averaged
        assert result["line"].endswith(  # the file's line: every item
            f"loss: 2.0000  loss_aux: 15.0000  time: {0.1 * (rank + 1):.4f}  acc: {rank:.4f}"
        )
        assert result["line"].console.endswith(  # loss_aux, the one term, printed once
            f"loss: 2.0000  time: {0.1 * (rank + 1):.4f}  acc: {rank:.4f}"
        )
