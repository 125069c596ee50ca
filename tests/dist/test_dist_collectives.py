"""Collectives on a real two-process gloo group (spawned, world size 2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cadence import dist
from cadence.dist.testing import run_distributed

pytestmark = pytest.mark.dist


def _new_collectives(rank: int, tmpdir: str) -> dict:
    """The mmengine helpers added for #21, on the same two ranks."""
    ints = torch.tensor([1, 2]) + 2 * rank  # rank 0: [1, 2], rank 1: [3, 4]
    dist.all_reduce(ints, "mean")
    negative = torch.tensor([-1 - 2 * rank])  # -1 and -3: mean -2
    dist.all_reduce(negative, "mean")
    odd = torch.tensor([rank])  # 0 and 1: mean 0.5 truncated to 0
    dist.all_reduce(odd, "mean")
    bits = torch.tensor([0b0110 if rank == 0 else 0b0011])
    dist.all_reduce(bits, "bor")
    reduced_dict = {"b": torch.full((2, 2), float(rank + 1)), "a": torch.tensor([rank])}
    dist.all_reduce_dict(reduced_dict, "sum")
    linear = torch.nn.Linear(2, 1)
    with torch.no_grad():
        linear.weight.fill_(rank + 1)  # 1 and 2
        linear.bias.fill_(10 * (rank + 1))  # 10 and 20
    dist.all_reduce_params(linear.parameters(), op="mean")
    buffers = [torch.ones(3) * (rank + 1), torch.ones(1, dtype=torch.int64) * (rank + 1)]
    dist.all_reduce_params(buffers, coalesce=False)
    dist.init_local_group(node_rank=rank, num_gpus_per_node=1)  # one process per "machine"
    local = dist.get_local_group()
    with pytest.raises(RuntimeError, match="already initialized"):
        dist.init_local_group(rank, 1)
    cpu_mode = dist.collect_results_cpu([torch.tensor(rank)], 2)
    return {
        "ints": ints.tolist(),
        "negative": negative.tolist(),
        "odd": odd.tolist(),
        "bits": bits.item(),
        "dict": {k: v.tolist() for k, v in reduced_dict.items()},
        "params": (linear.weight.tolist(), linear.bias.tolist()),
        "buffers": [b.tolist() for b in buffers],
        "gather": [t.tolist() for t in dist.gather(torch.tensor([rank, 5]), dst=1)],
        "gather_object": dist.gather_object(f"o{rank}", dst=0),
        "local_group": dist.get_world_size(local),
        "files": dist.collect_results([f"f{i}" for i in range(rank, 6, 2)], 5, tmpdir=tmpdir),
        "gpu_mode": dist.collect_results_gpu([f"g{i}" for i in range(rank, 4, 2)], 3),
        "cpu_mode": None if cpu_mode is None else [t.item() for t in cpu_mode],
        "data_device": str(dist.get_data_device({"x": [torch.zeros(1)]})),
        "is_default": dist.get_default_group() is not None,
    }


def _collectives(tmpdir: str) -> dict:
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
        "new": _new_collectives(rank, tmpdir),
    }


def test_collectives_on_two_gloo_ranks(tmp_path):
    tmpdir = tmp_path / "parts"
    out = run_distributed(_collectives, str(tmpdir), world_size=2, timeout=30)
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
        new = res["new"]
        assert new["ints"] == [2, 3]  # (1+3)/2, (2+4)/2
        assert new["negative"] == [-2] and new["odd"] == [0]
        assert new["bits"] == 0b0111
        assert new["dict"] == {"a": [1], "b": [[3.0, 3.0], [3.0, 3.0]]}
        assert new["params"] == ([[1.5, 1.5]], [15.0])
        assert new["buffers"] == [[3.0, 3.0, 3.0], [3]]
        assert new["gather"] == ([] if rank == 0 else [[0, 5], [1, 5]])
        assert new["gather_object"] == (["o0", "o1"] if rank == 0 else None)
        assert new["local_group"] == 1
        assert new["data_device"] == "cpu" and new["is_default"]
    new0, new1 = out[0]["new"], out[1]["new"]
    assert new0["files"] == ["f0", "f1", "f2", "f3", "f4"] and new1["files"] is None
    assert not tmpdir.exists()  # rank 0 removed the parts and the folder they left empty
    assert new0["gpu_mode"] == ["g0", "g1", "g2"] and new1["gpu_mode"] is None
    assert new0["cpu_mode"] == [0, 1] and new1["cpu_mode"] is None
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
