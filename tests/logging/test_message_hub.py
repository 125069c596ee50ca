"""MessageHub: scalars, runtime info, resumable state and named instances."""

from __future__ import annotations

import io
import warnings

import numpy as np
import pytest
import torch

from cadence.checkpoint import portable
from cadence.checkpoint.files import safe_torch_load
from cadence.logging import HistoryBuffer, MessageHub, isolated_instances


def test_scalars_accumulate_in_history_buffers():
    hub = MessageHub("hub")
    hub.update_scalar("train/loss", 1.0)
    hub.update_scalar("train/loss", torch.tensor(3.0))
    buffer = hub.get_scalar("train/loss")
    assert buffer is hub.log_scalars["train/loss"]
    assert buffer.mean() == 2.0
    hub.update_scalars({"a": 1.0, "b": {"value": 6.0, "count": 3}, "c": torch.tensor(2.0)})
    assert hub.get_scalar("b").mean() == 2.0  # 6 / 3
    assert hub.get_scalar("c").current() == 2.0
    assert list(hub.log_scalars) == ["train/loss", "a", "b", "c"]


def test_missing_scalar_suggests_close_names():
    hub = MessageHub("hub")
    hub.update_scalar("train/loss", 1.0)
    with pytest.raises(KeyError, match="Did you mean 'train/loss'"):
        hub.get_scalar("train/los")


def test_update_scalars_checks_its_input():
    hub = MessageHub("hub")
    with pytest.raises(KeyError, match="value"):
        hub.update_scalars({"a": {"count": 2}})
    with pytest.raises(TypeError, match="dict"):
        hub.update_scalars([("a", 1.0)])


def test_runtime_info():
    hub = MessageHub("hub")
    hub.update_info("eta", 12.5)
    hub.update_info_dict({"epoch": 3, "iter": 30})
    assert hub.get_info("eta") == 12.5
    assert hub.get_info("missing", "default") == "default"
    assert hub.runtime_info == {"eta": 12.5, "epoch": 3, "iter": 30}
    assert hub.pop_info("eta") == 12.5 and hub.get_info("eta") is None


def test_resumed_flag_cannot_change():
    hub = MessageHub("hub")
    hub.update_scalar("time", 1.0, resumed=False)
    hub.update_scalar("time", 2.0, resumed=False)
    with pytest.raises(ValueError, match="resumed=False"):
        hub.update_scalar("time", 3.0)


def test_state_dict_keeps_copies_of_the_resumed_keys_only():
    hub = MessageHub("hub")
    hub.update_scalar("train/loss", torch.tensor(2.0))
    hub.update_scalar("train/loss", 4.0)
    hub.update_scalar("train/time", 0.1, resumed=False)
    hub.update_info("epoch", 3)
    hub.update_info("best", torch.tensor(0.75))
    hub.update_info("eta", 10.0, resumed=False)
    state = hub.state_dict()
    assert list(state["log_scalars"]) == ["train/loss"]
    saved = state["log_scalars"]["train/loss"]
    assert saved == {"values": [2.0, 4.0], "counts": [1, 1], "max_length": 1_000_000}
    assert state["runtime_info"] == {"epoch": 3, "best": 0.75}
    assert type(state["runtime_info"]["best"]) is float
    assert state["resumed_keys"]["train/time"] is False

    # survives a weights_only checkpoint round trip, as plain data and as mmengine's
    # buffers (what a checkpoint holds where mmengine is cadence's alias)
    blob = io.BytesIO()
    torch.save(state, blob)
    blob.seek(0)
    assert torch.load(blob, weights_only=True) == state
    blob = io.BytesIO()
    mmengine_layout = portable.for_mmengine({"message_hub": state})["message_hub"]
    torch.save(mmengine_layout, blob, pickle_module=portable.pickle_module)
    blob.seek(0)
    loaded = safe_torch_load(blob)
    assert isinstance(loaded["log_scalars"]["train/loss"], HistoryBuffer)

    fresh = MessageHub("fresh")
    fresh.load_state_dict(loaded)
    assert fresh.get_scalar("train/loss").mean() == 3.0
    assert fresh.get_info("epoch") == 3 and fresh.get_info("best") == 0.75
    assert "train/time" not in fresh.log_scalars
    again = fresh.state_dict()
    assert again["log_scalars"]["train/loss"] == saved
    assert again["resumed_keys"] == {"train/loss": True, "epoch": True, "best": True}


def test_load_state_dict_accepts_buffers_and_hubs():
    source = MessageHub("source")
    source.update_scalar("x", 5.0)
    source.update_info("note", {"a": [1]})
    target = MessageHub("target")
    target.load_state_dict(
        {"log_scalars": {"y": HistoryBuffer([1.0], [1])}, "runtime_info": {}, "resumed_keys": {}}
    )
    assert target.get_scalar("y").current() == 1.0
    target.load_state_dict(source)
    assert target.get_scalar("x").current() == 5.0
    assert target.get_info("note") == {"a": [1]}
    assert target.get_info("note") is not source.get_info("note")
    with pytest.raises(KeyError, match="resumed_keys"):
        target.load_state_dict({"log_scalars": {}, "runtime_info": {}})


def test_get_instance_fetches_by_name_and_makes_current():
    first = MessageHub.get_instance("first")
    second = MessageHub.get_instance("second")
    assert MessageHub.get_current_instance() is second
    assert MessageHub.get_instance("first") is first
    assert MessageHub.get_current_instance() is first
    assert first.instance_name == "first"
    assert MessageHub.check_instance_created("second")
    assert not MessageHub.check_instance_created("third")
    with pytest.warns(UserWarning, match="already exists"):
        MessageHub.get_instance("first", runtime_info={"a": 1})


def test_constructing_registers_and_current_defaults():
    assert MessageHub.get_current_instance().instance_name == "cadence"
    built = MessageHub("built", runtime_info={"a": 1})
    assert MessageHub.get_current_instance() is built
    assert MessageHub.get_instance("built") is built
    with pytest.raises(TypeError, match="non-empty str"):
        MessageHub("")


def test_isolated_instances_restores_the_registry():
    outer = MessageHub.get_instance("outer")
    with isolated_instances():
        assert not MessageHub.check_instance_created("outer")  # starts empty
        inner = MessageHub.get_instance("inner")
        assert MessageHub.get_current_instance() is inner
    assert not MessageHub.check_instance_created("inner")
    assert MessageHub.get_current_instance() is outer
    with isolated_instances(start_empty=False):
        assert MessageHub.get_current_instance() is outer
        MessageHub.get_instance("kept only inside")
    assert not MessageHub.check_instance_created("kept only inside")


def test_constructor_checks_arguments():
    with pytest.raises(TypeError, match="HistoryBuffer"):
        MessageHub("bad", log_scalars={"x": [1.0]})
    with pytest.raises(KeyError, match="resumed key 'y'"):
        MessageHub("bad", resumed_keys={"y": True})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MessageHub("ok", log_scalars={"x": HistoryBuffer()}, resumed_keys={"x": False})


def test_writers_do_what_update_scalar_and_update_info_do():
    hub, plain = MessageHub("hub"), MessageHub("plain")
    write, set_eta = hub.scalar_writer("train/time"), hub.info_writer("eta")
    for value in (1.0, 2, torch.tensor(4.0)):
        write(value)
        plain.update_scalar("train/time", value)
    set_eta(7.5)
    plain.update_info("eta", 7.5)
    mine, theirs = hub.state_dict(), plain.state_dict()
    assert mine.pop("log_scalars") == theirs.pop("log_scalars")
    assert mine == theirs
    untracked = hub.scalar_writer("time", resumed=False)
    untracked(1.0)
    assert "time" not in hub.state_dict()["log_scalars"]
    with pytest.raises(ValueError, match="resumed=False"):
        hub.scalar_writer("time")


def test_writers_stay_valid_when_a_state_is_loaded():
    source = MessageHub("source")
    source.update_scalar("train/loss", 9.0)
    source.update_info("eta", 1.0)
    for load in (source.state_dict(), source):
        hub = MessageHub("hub")
        write, set_eta = hub.scalar_writer("train/loss"), hub.info_writer("eta")
        hub.load_state_dict(load)
        write(3.0)
        set_eta(2.0)
        assert hub.get_scalar("train/loss").mean() == 6.0  # the loaded 9 and the written 3
        assert hub.get_info("eta") == 2.0


def test_scalars_accept_what_mmengine_does():
    hub = MessageHub("kinds")
    hub.update_scalar("int", 3)
    hub.update_scalar("np", np.float32(0.5), count=np.int64(2))
    hub.update_scalar("zero_d", torch.tensor(1.5))
    hub.update_scalars({"arr": np.array(2.0), "dict": {"value": torch.tensor(6.0), "count": 3}})
    assert hub.get_scalar("int").current() == 3
    assert hub.get_scalar("np").data[1].tolist() == [2]
    assert hub.get_scalar("zero_d").current() == 1.5
    assert hub.get_scalar("arr").current() == 2.0
    assert hub.get_scalar("dict").mean() == 2.0
    hub.update_info("epoch", np.int64(4))
    assert hub.get_info("epoch") == 4 and hub.runtime_info["epoch"] == 4


def test_number_writer_survives_loading_a_state():
    hub = MessageHub("number-writer")
    write = hub.number_writer("train/time")
    write(0.5)
    saved = MessageHub("saved")
    saved.update_scalar("train/time", 2.0)
    hub.load_state_dict(saved.state_dict())
    write(3.0)
    assert hub.get_scalar("train/time").state_dict()["values"] == [2.0, 3.0]


def test_wrong_kinds_are_also_mmengine_assertion_errors():
    with pytest.raises(TypeError, match="must be a HistoryBuffer"):
        MessageHub("bad-scalars", log_scalars={"a": 1})
    with pytest.raises(AssertionError):
        MessageHub("bad-keys", runtime_info={"iter": 1}, resumed_keys={"iters": False})
    hub = MessageHub("kinds")
    hub.update_scalars({"loss_iou": dict(value=1, count=2)})
    assert hub.get_scalar("loss_iou").mean() == 0.5
    for bad in ([], dict(count=1)):
        with pytest.raises(AssertionError):
            hub.update_scalars({"bad": bad})
