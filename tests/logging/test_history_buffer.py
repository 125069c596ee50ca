"""HistoryBuffer statistics, worked out by hand, and lazy tensor conversion."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from cadence.logging import HistoryBuffer, resolve_tensors


def filled(values, counts=None, max_length=1_000_000) -> HistoryBuffer:
    buffer = HistoryBuffer(max_length=max_length)
    for i, value in enumerate(values):
        buffer.update(value, 1 if counts is None else counts[i])
    return buffer


def test_statistics_over_all_and_windows():
    buffer = filled([1, 2, 3, 4])
    assert buffer.mean() == 2.5  # (1+2+3+4)/4
    assert buffer.mean(2) == 3.5  # (3+4)/2
    assert buffer.mean(100) == 2.5  # window larger than history: everything
    assert buffer.max() == 4 and buffer.max(3) == 4
    assert buffer.min() == 1 and buffer.min(3) == 2
    assert buffer.current() == 4
    assert len(buffer) == 4


def test_mean_divides_value_sum_by_count_sum():
    buffer = filled([6.0, 2.0], counts=[3, 1])
    assert buffer.mean() == 2.0  # (6 + 2) / (3 + 1)
    values, counts = buffer.data
    assert isinstance(values, np.ndarray)
    assert values.tolist() == [6.0, 2.0] and counts.tolist() == [3, 1]


def test_statistics_by_name_match_methods():
    buffer = filled([5, 1, 3])
    assert buffer.statistics("mean", 2) == 2.0
    assert buffer.statistics("max", window_size=2) == 3
    assert buffer.statistics("current") == 3
    with pytest.raises(KeyError, match="Did you mean 'mean'"):
        buffer.statistics("maen")


def test_register_custom_statistics(monkeypatch):
    monkeypatch.setattr(HistoryBuffer, "_statistics_methods", {})

    @HistoryBuffer.register_statistics
    def spread(buffer, window_size=None):
        return buffer.max(window_size) - buffer.min(window_size)

    assert filled([4, 9, 1, 7]).statistics("spread", 2) == 6  # max(1,7) - min(1,7)
    with pytest.raises(ValueError, match="already registered"):
        HistoryBuffer.register_statistics(spread)
    with pytest.raises(ValueError, match="already registered"):

        def mean(buffer):  # a built-in name
            return 0

        HistoryBuffer.register_statistics(mean)


def test_max_length_keeps_newest_entries():
    buffer = filled([1, 2, 3, 4, 5], max_length=3)
    assert buffer.data[0].tolist() == [3, 4, 5]
    assert len(buffer) == 3
    assert buffer.mean() == 4.0
    long = filled(range(5000), max_length=2)
    assert long.data[0].tolist() == [4998, 4999]
    assert len(long._values) <= 2 + 1024  # storage stays bounded


def test_initial_history_is_loaded():
    buffer = HistoryBuffer([1.0, 3.0], [1, 1])
    assert buffer.mean() == 2.0
    with pytest.raises(ValueError, match="same length"):
        HistoryBuffer([1.0], [])


@pytest.fixture
def accelerator(monkeypatch):
    """Make CPU tensors look like accelerator tensors, which the buffer keeps unread."""
    monkeypatch.setattr(torch.Tensor, "is_cpu", property(lambda self: False))


@pytest.fixture
def transfers(monkeypatch):
    """Record every device-to-host copy of a whole tensor (``tolist``)."""
    calls = []
    original = torch.Tensor.tolist

    def counting_tolist(self):
        calls.append(tuple(self.shape))
        return original(self)

    monkeypatch.setattr(torch.Tensor, "tolist", counting_tolist)
    return calls


def test_accelerator_tensors_are_converted_only_when_read(accelerator, transfers, monkeypatch):
    monkeypatch.setattr(torch.Tensor, "item", lambda self: pytest.fail("item() called"))
    buffer = HistoryBuffer()
    weight = torch.tensor(2.0, requires_grad=True)
    for value in (1.0, 2.0, 3.0, 4.0, 5.0):
        buffer.update(weight * value)  # graph-carrying scalars
    assert transfers == []
    assert not any(v.requires_grad for v in buffer._values)  # the graph is not kept alive
    assert buffer.mean() == 6.0  # 2 * (1+2+3+4+5) / 5
    assert transfers == [(5,)]  # one host transfer for all five
    assert buffer.max() == 10.0
    assert len(transfers) == 1  # nothing left to convert
    assert all(type(v) is float for v in buffer._values)


def test_cpu_tensors_are_read_when_logged(transfers):
    buffer = HistoryBuffer()
    weight = torch.tensor(3.0, requires_grad=True)
    buffer.update(weight * 2)
    assert buffer._values == [6.0] and type(buffer._values[0]) is float
    assert transfers == []


def test_mixed_numbers_and_tensor_dtypes(accelerator, transfers):
    buffer = HistoryBuffer()
    buffer.update(torch.tensor(1.5, dtype=torch.float64))
    buffer.update(2)
    buffer.update(torch.tensor([3], dtype=torch.int64))
    buffer.update(np.float32(2.5))
    buffer.update(torch.tensor(1.0, dtype=torch.float16))
    buffer.update(torch.tensor(0.5, dtype=torch.float64))
    assert buffer.mean() == pytest.approx((1.5 + 2 + 3 + 2.5 + 1.0 + 0.5) / 6)
    assert sorted(transfers) == [(1,), (1,), (2,)]  # one copy per dtype
    assert buffer.current() == 0.5
    assert buffer.max() == 3


def test_resolve_tensors_batches_several_buffers(accelerator, transfers):
    first, second = HistoryBuffer(), HistoryBuffer()
    first.update(torch.tensor(1.0))
    second.update(torch.tensor(3.0))
    second.update(torch.tensor(5.0))
    resolve_tensors([first, second])
    assert transfers == [(3,)]
    assert first.current() == 1.0 and second.mean() == 4.0


def test_pending_tensors_are_bounded_without_reads(accelerator, transfers):
    buffer = HistoryBuffer()
    for i in range(1100):
        buffer.update(torch.tensor(float(i)))
    assert len(transfers) == 1  # converted once too many were waiting
    assert buffer.mean(100) == sum(range(1000, 1100)) / 100


def test_bad_values_and_windows():
    buffer = HistoryBuffer()
    with pytest.raises(ValueError, match="empty"):
        buffer.mean()
    with pytest.raises(ValueError, match="empty"):
        buffer.current()
    with pytest.raises(ValueError, match="exactly one element"):
        buffer.update(torch.ones(2))
    with pytest.raises(TypeError, match="int, float or one-element"):
        buffer.update("0.5")
    with pytest.raises(TypeError, match="count"):
        buffer.update(1.0, count="2")
    buffer.update(1.0)
    with pytest.raises(ValueError, match=">= 1"):
        buffer.mean(0)
    with pytest.raises(TypeError, match="window_size"):
        buffer.mean(2.5)
    with pytest.raises(ValueError, match="max_length"):
        HistoryBuffer(max_length=0)


def test_state_dict_round_trip_is_plain_data():
    buffer = filled([1.0, 2.0, 4.0], counts=[1, 2, 1], max_length=5)
    buffer.update(torch.tensor(8.0))
    state = buffer.state_dict()
    assert json.loads(json.dumps(state)) == {
        "values": [1.0, 2.0, 4.0, 8.0],
        "counts": [1, 2, 1, 1],
        "max_length": 5,
    }
    restored = HistoryBuffer()
    restored.load_state_dict(state)
    assert restored.max_length == 5
    assert restored.mean() == 3.0  # 15 / 5
    assert HistoryBuffer.from_state_dict(state).current() == 8.0
    with pytest.raises(KeyError, match="counts"):
        HistoryBuffer().load_state_dict({"values": []})


def test_last_ready_skips_unread_accelerator_tensors(accelerator, transfers):
    buffer = HistoryBuffer()
    assert buffer.last_ready() is None
    buffer.update(0.5)
    buffer.update(torch.tensor(7.0))  # waits on the "accelerator"
    assert buffer.last_ready() == 0.5  # no synchronisation to read it
    assert transfers == []
    assert buffer.current() == 7.0  # reading statistics converts it
    assert buffer.last_ready() == 7.0


def test_max_length_can_shrink_later():
    buffer = filled(range(10))
    buffer.max_length = 3
    buffer.update(10)
    assert buffer.data[0].tolist() == [8, 9, 10]
    with pytest.raises(ValueError, match="max_length"):
        buffer.max_length = 0


def test_values_and_counts_may_be_numpy_scalars_and_one_element_tensors():
    buffer = HistoryBuffer(np.array([1.0, 2.0]), np.array([1, 2]))  # arrays, as mmengine's
    buffer.update(np.float32(3.0), count=np.int64(3))
    buffer.update(torch.tensor(4.0), count=torch.tensor(1))
    buffer.update(np.array(5.0), count=2.0)
    values, counts = buffer.data
    assert values.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert counts.tolist() == [1, 2, 3, 1, 2]
    assert buffer.mean() == pytest.approx(15.0 / 9)  # sum of values / sum of counts
    with pytest.raises(TypeError, match="count must be a number, got bool"):
        buffer.update(1.0, count=True)
    with pytest.raises(TypeError, match="count must be a number, got str"):
        buffer.update(1.0, count="2")  # type: ignore[arg-type]


def test_number_appender_writes_the_buffer_and_trim_bounds_it():
    buffer = HistoryBuffer(max_length=3)
    append = buffer.number_appender()
    for value in range(2000):
        append(float(value))
    assert buffer.current() == 1999.0 and len(buffer) == 3  # reads see max_length entries
    assert buffer.mean() == pytest.approx((1997 + 1998 + 1999) / 3)
    for _ in range(2000):
        append(1.0)
    buffer.trim()
    assert len(buffer._values) <= 3 + 1024  # the list itself is bounded after trim()
    assert buffer.state_dict()["counts"] == [1, 1, 1]


def test_counts_start_at_the_first_count_that_is_not_one():
    buffer = HistoryBuffer()
    append = buffer.number_appender()
    append(1.0)
    buffer.update(4.0, count=2)
    append(6.0)
    assert buffer.data[1].tolist() == [1, 2, 1]
    assert buffer.mean() == pytest.approx((1 + 4 + 6) / 4)
    assert buffer.state_dict() == {"values": [1.0, 4.0, 6.0], "counts": [1, 2, 1],
                                   "max_length": 1_000_000}  # fmt: skip


def test_loading_a_state_keeps_the_number_appender_writing_here():
    buffer = HistoryBuffer()
    append = buffer.number_appender()
    buffer.load_state_dict(HistoryBuffer([5.0, 7.0], [1, 3]).state_dict())
    append(9.0)
    assert buffer.state_dict()["values"] == [5.0, 7.0, 9.0]
    assert buffer.state_dict()["counts"] == [1, 3, 1]


def test_nested_histories_are_flattened_and_bad_ones_are_mmengine_errors():
    buffer = HistoryBuffer(np.array([[1, 2], [3, 4]]), [[1, 1], [1, 2]], max_length=3)
    values, counts = buffer.data
    assert values.tolist() == [2, 3, 4] and counts.tolist() == [1, 1, 2]
    assert buffer._log_history.tolist() == [2, 3, 4]  # mmengine's field names
    assert buffer._count_history.tolist() == [1, 1, 2]
    with pytest.raises(AssertionError, match="same length"):
        HistoryBuffer([1, 2], [1])
    with pytest.raises(TypeError):
        buffer.update(torch.tensor([1.0, 2.0]))
