"""With two ranks the logged losses are the mean over ranks; other values stay per rank."""

from __future__ import annotations

import json
import os
import socket
import time
import types
from datetime import timedelta

import pytest
import torch.distributed as dist
import torch.multiprocessing as mp


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _worker(rank: int, world_size: int, port: int, out_dir: str) -> None:
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world_size, timeout=timedelta(seconds=20))
    try:
        from runner_double import StandInRunner

        from cadence.logging import LogProcessor, MessageHub
        from cadence.logging import log_processor as module

        module._max_cuda_memory_mb = lambda runner: None
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
        with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as file:
            json.dump({"tag": tag, "line": line}, file)
    finally:
        dist.destroy_process_group()


@pytest.mark.dist
def test_losses_are_averaged_over_ranks(tmp_path):
    context = mp.start_processes(
        _worker, args=(2, _free_port(), str(tmp_path)), nprocs=2, join=False,
        start_method="spawn",
    )  # fmt: skip
    deadline = time.monotonic() + 30
    while not context.join(timeout=max(0.1, deadline - time.monotonic())):
        if time.monotonic() > deadline:
            for process in context.processes:
                process.kill()
            pytest.fail("workers did not finish in 30 s")
    results = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    for rank, result in enumerate(results):
        assert result["tag"]["loss"] == 2.0  # (1 + 3) / 2
        assert result["tag"]["loss_aux"] == 15.0  # (10 + 20) / 2
        assert result["tag"]["time"] == pytest.approx(0.1 * (rank + 1))  # not averaged
        assert result["tag"]["acc"] == float(rank)  # not averaged
        assert result["line"].endswith(
            f"loss: 2.0000  loss_aux: 15.0000  time: {0.1 * (rank + 1):.4f}  acc: {rank:.4f}"
        )
