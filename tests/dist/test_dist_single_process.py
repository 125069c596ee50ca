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


def test_integer_mean_and_bitwise_ops_are_accepted():
    data = torch.tensor([3, -5])
    dist.all_reduce(data, "mean")
    dist.all_reduce(data, "band")
    assert data.dtype == torch.int64 and data.tolist() == [3, -5]


def test_gather_and_gather_object_in_one_process():
    data = torch.arange(2)
    gathered = dist.gather(data, dst=0)
    assert len(gathered) == 1 and gathered[0] is data
    assert dist.gather_object({"k": 1}) == [{"k": 1}]
    with pytest.raises(TypeError, match="torch.Tensor"):
        dist.gather([1, 2])  # type: ignore[arg-type]


def test_all_reduce_dict_and_params_leave_values_alone():
    data = {"a": torch.arange(2), "b": torch.ones(2, 2)}
    before = dict(data)
    dist.all_reduce_dict(data, "mean")
    assert data["a"] is before["a"] and data["b"] is before["b"]
    with pytest.raises(AssertionError, match="dict of tensors"):  # a TypeError too
        dist.all_reduce_dict([torch.ones(1)])  # type: ignore[arg-type]
    consumed = []

    def params():
        consumed.append(True)
        yield torch.ones(1)

    dist.all_reduce_params(params())
    assert consumed == []  # as mmengine: nothing is read when not distributed


def test_local_group_without_process_group():
    dist.init_local_group(node_rank=0, num_gpus_per_node=8)
    assert dist.get_local_group() is None
    assert dist.get_default_group() is None
    with pytest.raises(ValueError, match="num_gpus_per_node must be at least 1"):
        dist.init_local_group(0, 0)
    with pytest.raises(ValueError, match="node_rank must be a non-negative int"):
        dist.init_local_group(-1, 2)


def test_get_data_device_walks_containers():
    assert dist.get_data_device(torch.zeros(1)) == torch.device("cpu")
    assert dist.get_data_device({"a": [torch.zeros(1), (torch.ones(2),)]}) == torch.device("cpu")
    meta = torch.empty(1, device="meta")
    with pytest.raises(ValueError, match="different devices"):
        dist.get_data_device([torch.zeros(1), meta])
    with pytest.raises(ValueError, match="empty"):
        dist.get_data_device([])
    with pytest.raises(TypeError, match="data should be a Tensor, sequence of tensor or dict"):
        dist.get_data_device("cpu")  # mmengine's words
    with pytest.raises(TypeError, match="data should be a Tensor, list of tensor or dict"):
        dist.cast_data_device(123, "cpu")


def test_cast_data_device_keeps_types_and_fills_out():
    data = {"x": [torch.ones(2)], "y": (torch.zeros(1),)}
    moved = dist.cast_data_device(data, "meta")
    assert isinstance(moved["y"], tuple) and moved["x"][0].device.type == "meta"
    same = torch.ones(1)
    assert dist.cast_data_device(same, torch.device("cpu")) is same
    out = [torch.zeros(2), torch.zeros(1)]
    result = dist.cast_data_device([torch.tensor([1.0, 2.0]), torch.tensor([3.0])], "cpu", out=out)
    assert out[0].tolist() == [1.0, 2.0] and out[1].tolist() == [3.0]
    assert result[1].tolist() == [3.0]
    with pytest.raises(TypeError, match="out must have the type of data"):
        dist.cast_data_device([torch.ones(1)], "cpu", out=(torch.ones(1),))
    with pytest.raises(ValueError, match="differ in length"):
        dist.cast_data_device([torch.ones(1)], "cpu", out=[torch.ones(1), torch.ones(1)])
    with pytest.raises(ValueError, match="empty"):
        dist.cast_data_device({}, "cpu")


def test_all_reduce_rejects_bad_ops_and_inputs():
    with pytest.raises(ValueError, match="Did you mean 'mean'"):
        dist.all_reduce(torch.ones(2), "mena")
    with pytest.raises(ValueError, match="'bxor'"):
        dist.all_reduce(torch.ones(2), "xor")
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


def test_collect_results_single_process_cuts_to_size(tmp_path):
    assert dist.collect_results([1, 2, 3, 4], 3) == [1, 2, 3]
    assert dist.collect_results([1, 2, 3], 2, tmpdir=str(tmp_path / "unused")) == [1, 2]
    assert dist.collect_results_cpu([torch.ones(1), 2], 1)[0].device.type == "cpu"
    assert dist.collect_results_gpu(["a", "b", "c"], 2) == ["a", "b"]
    assert not (tmp_path / "unused").exists()  # one process: nothing goes through files
    with pytest.warns(UserWarning, match="collected 2 results for a dataset of 5"):
        assert dist.collect_results([1, 2], 5) == [1, 2]


def test_collect_results_validates_its_arguments():
    with pytest.raises(ValueError, match="non-negative int"):
        dist.collect_results([1], -1)
    with pytest.raises(ValueError, match="device must be one of"):
        dist.collect_results([1], 1, device="tpu")
    with pytest.raises(TypeError, match="must be a list"):
        dist.collect_results((1,), 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tmpdir can only be used with device='cpu'"):
        dist.collect_results([1], 1, device="gpu", tmpdir="x")


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
