"""cadence.dist without a process group: every helper answers as rank 0 of 1."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cadence import dist
from cadence.dist.results import interleave, to_cpu


def test_rank_and_world_without_process_group():
    assert dist.get_rank() == 0
    assert dist.get_world_size() == 1
    assert dist.get_dist_info() == (0, 1)
    assert dist.is_distributed() is False
    assert dist.is_main_process() is True
    assert dist.get_backend() is None
    assert dist.get_comm_device() == torch.device("cpu")


def test_local_rank_and_size_default_and_env(monkeypatch):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    assert dist.get_local_rank() == 0
    assert dist.get_local_size() == 1
    monkeypatch.setenv("LOCAL_RANK", "3")
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "8")
    assert dist.get_local_rank() == 3
    assert dist.get_local_size() == 8
    monkeypatch.setenv("LOCAL_RANK", "three")
    with pytest.raises(ValueError, match="LOCAL_RANK must be an integer"):
        dist.get_local_rank()


def test_master_only_runs_on_rank_zero_and_keeps_the_name():
    calls = []

    @dist.master_only
    def save(value):
        """Save it."""
        calls.append(value)
        return value * 2

    assert save(4) == 8
    assert calls == [4]
    assert save.__name__ == "save" and save.__doc__ == "Save it."


def test_barrier_is_a_no_op():
    assert dist.barrier() is None


@pytest.mark.parametrize("op", ["sum", "mean", "max", "min", "SUM"])
def test_all_reduce_leaves_the_tensor_alone(op):
    data = torch.tensor([1.5, -2.0])
    dist.all_reduce(data, op)
    assert torch.equal(data, torch.tensor([1.5, -2.0]))


def test_all_reduce_rejects_bad_ops_and_inputs():
    with pytest.raises(ValueError, match="Did you mean 'mean'"):
        dist.all_reduce(torch.ones(2), "mena")
    with pytest.raises(TypeError, match="floating point"):
        dist.all_reduce(torch.ones(2, dtype=torch.int64), "mean")
    with pytest.raises(TypeError, match="torch.Tensor"):
        dist.all_reduce([1.0, 2.0])  # type: ignore[arg-type]


def test_gathers_and_broadcasts_in_one_process():
    data = torch.arange(3)
    gathered = dist.all_gather(data)
    assert len(gathered) == 1 and gathered[0] is data
    obj = {"a": [1, 2]}
    assert dist.all_gather_object(obj) == [obj]
    dist.broadcast(data, src=0)
    assert torch.equal(data, torch.arange(3))
    box = ["x", 2]
    dist.broadcast_object_list(box)
    assert box == ["x", 2]
    with pytest.raises(TypeError, match="expects a list"):
        dist.broadcast_object_list(("x",))  # type: ignore[arg-type]


def test_sync_random_seed_draws_from_numpy_global_generator():
    np.random.seed(7)
    expected = np.random.RandomState(7).randint(2**31)
    seed = dist.sync_random_seed()
    assert seed == expected
    assert isinstance(seed, int) and 0 <= seed < 2**31


def test_collect_results_single_process_cuts_to_size():
    assert dist.collect_results([1, 2, 3, 4], 3) == [1, 2, 3]
    with pytest.warns(UserWarning, match="collected 2 results for a dataset of 5"):
        assert dist.collect_results([1, 2], 5) == [1, 2]


def test_collect_results_validates_its_arguments():
    with pytest.raises(ValueError, match="non-negative int"):
        dist.collect_results([1], -1)
    with pytest.raises(ValueError, match="device must be one of"):
        dist.collect_results([1], 1, device="tpu")
    with pytest.raises(TypeError, match="must be a list"):
        dist.collect_results((1,), 1)  # type: ignore[arg-type]


def test_interleave_restores_round_robin_order_with_uneven_counts():
    # 7 samples dealt to 3 ranks: rank 0 has 0,3,6; rank 1 has 1,4; rank 2 has 2,5
    assert interleave([[0, 3, 6], [1, 4], [2, 5]]) == list(range(7))
    # None is a legitimate result and is kept
    assert interleave([[None, "c"], ["b"]]) == [None, "b", "c"]
    assert interleave([[], []]) == []


def test_to_cpu_walks_containers():
    data = {"a": [torch.ones(1)], "b": (torch.zeros(2), 3), "c": "text"}
    moved = to_cpu(data)
    assert moved["c"] == "text" and moved["b"][1] == 3
    assert isinstance(moved["b"], tuple) and moved["a"][0].device.type == "cpu"
