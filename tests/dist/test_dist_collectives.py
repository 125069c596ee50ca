"""Collectives on a real two-process gloo group (spawned, world size 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cadence import dist
from cadence.dist.testing import run_distributed

pytestmark = pytest.mark.dist


def _collectives() -> dict:
    rank = dist.get_rank()
    base = torch.tensor([1.0, 4.0]) * (rank + 1)  # rank 0: [1, 4], rank 1: [2, 8]
    reduced = {}
    for op in ("sum", "mean", "max", "min"):
        data = base.clone()
        dist.all_reduce(data, op)
        reduced[op] = data.tolist()
    gathered = [t.tolist() for t in dist.all_gather(base)]
    objects = dist.all_gather_object({"rank": rank, "tag": f"r{rank}"})
    box = [f"from {rank}", rank]
    dist.broadcast_object_list(box, src=1)
    tensor = torch.tensor([10 * rank + 1, 10 * rank + 2])
    dist.broadcast(tensor, src=0)
    np.random.seed(100 + rank)  # ranks would draw different seeds on their own
    seed = dist.sync_random_seed()
    dist.barrier()
    # N=7 on 2 ranks with round-up: rank 1 holds the padding duplicate of sample 0 last
    padded = dist.collect_results([f"s{i}" for i in range(rank, 8, 2)], 7)
    # N=7 without round-up: rank 0 holds 4 samples, rank 1 holds 3
    uneven = dist.collect_results([f"s{i}" for i in range(rank, 7, 2)], 7)
    return {
        "info": (dist.get_rank(), dist.get_world_size(), dist.get_dist_info()),
        "flags": (dist.is_distributed(), dist.is_main_process(), dist.get_backend()),
        "local": (dist.get_local_rank(), dist.get_local_size()),
        "master_only": dist.master_only(lambda: "ran")(),
        "reduced": reduced,
        "gathered": gathered,
        "objects": objects,
        "box": box,
        "tensor": tensor.tolist(),
        "seed": seed,
        "padded": padded,
        "uneven": uneven,
    }


def test_collectives_on_two_gloo_ranks():
    out = run_distributed(_collectives, world_size=2, timeout=30)
    rank0_seed = np.random.RandomState(100).randint(2**31)
    for rank, res in enumerate(out):
        assert res["info"] == (rank, 2, (rank, 2))
        assert res["flags"] == (True, rank == 0, "gloo")
        assert res["local"] == (rank, 2)
        assert res["master_only"] == ("ran" if rank == 0 else None)
        assert res["reduced"] == {
            "sum": [3.0, 12.0],
            "mean": [1.5, 6.0],
            "max": [2.0, 8.0],
            "min": [1.0, 4.0],
        }
        assert res["gathered"] == [[1.0, 4.0], [2.0, 8.0]]
        assert res["objects"] == [{"rank": 0, "tag": "r0"}, {"rank": 1, "tag": "r1"}]
        assert res["box"] == ["from 1", 1]
        assert res["tensor"] == [1, 2]
        assert res["seed"] == rank0_seed
    expected = [f"s{i}" for i in range(7)]
    assert out[0]["padded"] == expected and out[1]["padded"] is None
    assert out[0]["uneven"] == expected and out[1]["uneven"] is None


def _fails_on_rank_one() -> None:
    if dist.get_rank() == 1:
        raise ValueError("boom on rank one")
    dist.barrier()


def test_run_distributed_reports_a_failing_rank_without_hanging():
    with pytest.raises(
        RuntimeError, match="(?s)rank 1 failed in _fails_on_rank_one.*boom on rank one"
    ):
        run_distributed(_fails_on_rank_one, world_size=2, timeout=20)
