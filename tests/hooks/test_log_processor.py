"""LogProcessor lines and tags, checked against strings written out by hand."""

from __future__ import annotations

import types

import pytest
import torch
from runner_double import StandInRunner

from cadence.hooks import log_processor as log_processor_module
from cadence.hooks.log_processor import LogProcessor, fit_pieces
from cadence.logging import HistoryBuffer, MessageHub
from cadence.registry import LOG_PROCESSORS


class Loader:
    def __init__(self, length: int) -> None:
        self.length = length

    def __len__(self) -> int:
        return self.length


class Endless:
    """A dataloader over an iterable dataset: no length."""

    def __len__(self) -> int:
        raise TypeError("no len")


@pytest.fixture(autouse=True)
def _no_cuda_memory(monkeypatch):
    monkeypatch.setattr(log_processor_module, "_max_cuda_memory_mb", lambda runner: None)


def make_runner(hub, *, iter=49, epoch=0, train_len=100, val_len=10, train_loop=True):
    def loop(length):
        return types.SimpleNamespace(dataloader=Loader(length) if length else Endless())

    return StandInRunner(
        iter=iter,
        epoch=epoch,
        max_iters=1000,
        max_epochs=10,
        train_loop=loop(train_len) if train_loop else None,
        val_loop=loop(val_len),
        test_loop=loop(val_len),
        message_hub=hub,
        world_size=1,
        rank=0,
    )


def train_hub() -> MessageHub:
    hub = MessageHub("log")
    hub.update_scalar("train/lr", 0.01)
    for time, data_time, loss, loss_cls in [
        (0.1, 0.01, torch.tensor(1.0), 0.4),
        (0.2, 0.02, 0.5, 0.2),
        (0.3, 0.03, torch.tensor(0.3, dtype=torch.float64), 0.3),
    ]:
        hub.update_scalar("train/time", time)
        hub.update_scalar("train/data_time", data_time)
        hub.update_scalar("train/loss", loss)
        hub.update_scalar("train/loss_cls", loss_cls)
    hub.update_info("eta", 62.7)
    return hub


def test_epoch_based_train_line():
    hub = train_hub()
    tag, line = LogProcessor(max_width=None).get_log_after_iter(make_runner(hub), 49, "train")
    # every item, as mmengine prints it (loss_cls too, though it is the loss's only term)
    assert (
        line
        == line.console
        == (
            "Epoch(train)  [1][ 50/100]  lr: 1.0000e-02  eta: 0:01:02  time: 0.2000  "
            "data_time: 0.0200  loss: 0.6000  loss_cls: 0.3000"
        )
    )
    assert tag == pytest.approx(
        {"lr": 0.01, "time": 0.2, "data_time": 0.02, "loss": 0.6, "loss_cls": 0.3,
         "epoch": 1, "iter": 50}
    )  # fmt: skip
    assert all(type(v) in (int, float) for v in tag.values())


def test_iter_based_train_line_and_memory(monkeypatch):
    monkeypatch.setattr(log_processor_module, "_max_cuda_memory_mb", lambda runner: 1234)
    hub = train_hub()
    processor = LogProcessor(by_epoch=False, max_width=None)
    tag, line = processor.get_log_after_iter(make_runner(hub), 49, "train")
    assert line == (
        "Iter(train) [  50/1000]  lr: 1.0000e-02  eta: 0:01:02  time: 0.2000  "
        "data_time: 0.0200  memory: 1234  loss: 0.6000  loss_cls: 0.3000"
    )
    assert tag["memory"] == 1234 and "epoch" not in tag


def test_window_size_and_num_digits():
    hub = MessageHub("log")
    for value in range(1, 21):
        hub.update_scalar("train/loss", float(value))
    hub.update_scalar("train/accuracy", 0.5)
    _, line = LogProcessor(window_size=4, num_digits=2).get_log_after_iter(
        make_runner(hub), 0, "train"
    )
    # mean of 17..20, no lr, no time (so no eta), non-mean keys show the latest value
    assert line == "Epoch(train)  [1][  1/100]    loss: 18.50  accuracy: 0.50"


def test_several_learning_rates_and_eta_needs_time():
    hub = MessageHub("log")
    hub.update_scalar("train/generator.lr", 0.001)
    hub.update_scalar("train/discriminator.lr", 0.0002)
    hub.update_scalar("train/loss", 2.0)
    hub.update_info("eta", 5.0)  # ignored: no time/data_time scalars
    _, line = LogProcessor(by_epoch=False).get_log_after_iter(make_runner(hub, iter=0), 0, "train")
    assert line == (
        "Iter(train) [   1/1000]  generator.lr: 1.0000e-03 discriminator.lr: 2.0000e-04  "
        "loss: 2.0000"
    )


def test_hierarchy_prefixes_tags_but_not_the_line():
    hub = train_hub()
    processor = LogProcessor(log_with_hierarchy=True)
    tag, line = processor.get_log_after_iter(make_runner(hub), 49, "train")
    assert line.startswith("Epoch(train)  [1][ 50/100]  lr: 1.0000e-02  eta: 0:01:02")
    assert set(tag) == {
        "train/lr", "train/time", "train/data_time", "train/loss", "train/loss_cls",
        "epoch", "iter",
    }  # fmt: skip


def test_custom_statistics():
    hub = MessageHub("log")
    for value in range(1, 21):
        hub.update_scalar("train/loss", float(value))
    processor = LogProcessor(
        custom_cfg=[
            dict(data_src="loss", log_name="loss_global", method_name="mean", window_size="global"),
            dict(
                data_src="loss", log_name="loss_epoch_min", method_name="min", window_size="epoch"
            ),
            dict(data_src="loss", log_name="loss_max", method_name="max"),
            dict(data_src="missing", log_name="ignored", method_name="mean"),
        ],
        max_width=None,
    )
    runner = make_runner(hub, iter=4)
    tag, line = processor.get_log_after_iter(runner, 2, "train")
    assert tag["loss"] == 15.5  # default window 10: mean of 11..20
    assert tag["loss_global"] == 18.0  # window iter + 1 = 5: mean of 16..20
    assert tag["loss_epoch_min"] == 18  # window batch_idx + 1 = 3: min of 18..20
    assert tag["loss_max"] == 20
    assert "ignored" not in tag
    assert line.endswith(
        "loss: 15.5000  loss_global: 18.0000  loss_epoch_min: 18.0000  loss_max: 20.0000"
    )
    replaced = LogProcessor(custom_cfg=[dict(data_src="loss", method_name="current")])
    assert replaced.get_log_after_iter(runner, 2, "train")[0]["loss"] == 20.0


def test_custom_cfg_is_checked():
    with pytest.raises(ValueError, match="second time"):
        LogProcessor(
            custom_cfg=[
                dict(data_src="loss", method_name="mean"),
                dict(data_src="loss", method_name="max"),
            ]
        )
    with pytest.raises(ValueError, match="by_epoch=True"):
        LogProcessor(
            by_epoch=False,
            custom_cfg=[dict(data_src="loss", method_name="mean", window_size="epoch")],
        )
    with pytest.raises(ValueError, match="Did you mean 'global'"):
        LogProcessor(custom_cfg=[dict(data_src="loss", method_name="mean", window_size="globl")])
    with pytest.raises(KeyError, match="data_src"):
        LogProcessor(custom_cfg=[dict(method_name="mean")])
    with pytest.raises(KeyError, match="method_name"):
        LogProcessor(custom_cfg=[dict(data_src="loss")])
    with pytest.raises(AssertionError):  # mmengine asserts: its type too
        LogProcessor(custom_cfg=[dict(data_src="loss", method_name="mean")] * 2)


def test_mmengines_helpers_windows_positions_and_prefixes():
    processor = LogProcessor(window_size=2)
    runner = make_runner(train_hub(), iter=10, epoch=1)
    windows = processor._parse_windows_size(
        runner, 3, [dict(data_src="loss", window_size=w) for w in ("epoch", "global", 7)]
    )
    assert [cfg["window_size"] for cfg in windows] == [4, 11, 7]
    with pytest.raises(TypeError):
        processor._parse_windows_size(runner, 3, [dict(data_src="loss", window_size=[])])
    assert processor._get_iter(runner, 3) == 4
    assert (processor._get_epoch(runner, "train"), processor._get_epoch(runner, "val")) == (2, 1)
    with pytest.raises(ValueError):
        processor._get_epoch(runner, "test")
    assert processor._get_cur_loop(runner, "val") is runner.val_loop
    tag = processor._collect_scalars([], runner, "train", reserve_prefix=True)
    assert "train/loss" in tag and "loss" not in tag


def test_a_logged_mean_is_summed_as_numpy_sums_it():
    import numpy as np

    values = np.random.default_rng(0).standard_normal(100)
    buffer = HistoryBuffer(values, np.ones(100))
    # bit for bit mmengine's (numpy's pairwise) sum, which math.fsum's exact sum is not always
    assert buffer.mean(10) == values[-10:].sum() / 10
    assert buffer.mean() == values.sum() / 100


def val_hub() -> MessageHub:
    hub = MessageHub("log")
    for data_time, time in [(0.01, 0.1), (0.03, 0.3)]:
        hub.update_scalar("val/data_time", data_time)
        hub.update_scalar("val/time", time)
    hub.update_scalar("val/accuracy/top1", 92.0)
    return hub


def test_val_and_test_epoch_lines():
    hub = val_hub()
    runner = make_runner(hub, epoch=1, val_len=2)
    tag, line = LogProcessor().get_log_after_epoch(runner, 1, "val")
    assert line == "Epoch(val) [1][2/2]    accuracy/top1: 92.0000  data_time: 0.0200  time: 0.2000"
    assert list(tag) == ["accuracy/top1", "data_time", "time"]
    _, line = LogProcessor().get_log_after_epoch(runner, 1, "test")
    assert line == "Epoch(test) [2/2]    "  # nothing logged under test/
    _, line = LogProcessor(by_epoch=False).get_log_after_epoch(runner, 1, "val")
    assert line.startswith("Iter(val) [2/2]    accuracy/top1: 92.0000")


def test_test_epoch_line_and_non_scalars():
    hub = MessageHub("log")
    hub.update_scalar("test/accuracy", 0.875)
    hub.update_info("test/confusion", [[1, 0], [0, 1]])
    runner = make_runner(hub, val_len=4)
    tag, line = LogProcessor().get_log_after_epoch(runner, 3, "test")
    assert line == "Epoch(test) [4/4]    accuracy: 0.8750  confusion: [[1, 0], [0, 1]]"
    assert tag == {"accuracy": 0.875}
    tag, _ = LogProcessor().get_log_after_epoch(runner, 3, "test", with_non_scalar=True)
    assert tag == {"accuracy": 0.875, "confusion": [[1, 0], [0, 1]]}


def test_val_iteration_lines():
    hub = val_hub()
    runner = make_runner(hub, epoch=1, val_len=10)
    tag, line = LogProcessor().get_log_after_iter(runner, 4, "val")
    assert line == "Epoch(val)  [1][ 5/10]    "
    assert tag["epoch"] == 1 and tag["iter"] == 50
    _, line = LogProcessor().get_log_after_iter(runner, 4, "test")
    assert line == "Epoch(test) [ 5/10]    "
    no_train = make_runner(hub, epoch=0, val_len=10, train_loop=False)
    tag, line = LogProcessor().get_log_after_iter(no_train, 4, "val")
    assert line == "Epoch(val)[0][ 5/10]    "
    assert tag["iter"] == 0


def test_unknown_dataloader_length():
    hub = train_hub()
    runner = make_runner(hub, train_len=0, val_len=0)
    _, line = LogProcessor().get_log_after_iter(runner, 49, "train")
    assert line.startswith("Epoch(train)  [1][50/?]  lr: 1.0000e-02")
    hub.update_scalar("val/accuracy", 1.0)
    _, line = LogProcessor().get_log_after_epoch(runner, 6, "val")
    assert line.startswith("Epoch(val) [0][7/7]    accuracy: 1.0000")


def test_bad_mode_and_registration():
    hub = train_hub()
    with pytest.raises(ValueError, match="Did you mean 'train'"):
        LogProcessor().get_log_after_iter(make_runner(hub), 0, "trian")
    with pytest.raises(ValueError, match="val, test"):
        LogProcessor().get_log_after_epoch(make_runner(hub), 0, "train")
    built = LOG_PROCESSORS.build(dict(type="LogProcessor", window_size=3, by_epoch=False))
    assert isinstance(built, LogProcessor) and built.window_size == 3


def test_log_processor_is_importable_at_mmengines_runner_path():
    from cadence.runner import LogProcessor as FromRunner

    assert FromRunner is LogProcessor


def test_lines_fit_the_width_by_leaving_out_the_least_useful_items():
    hub = train_hub()
    tag, line = LogProcessor().get_log_after_iter(make_runner(hub), 49, "train")
    # the log file's line keeps every item (mmengine's line)
    assert line == (
        "Epoch(train)  [1][ 50/100]  lr: 1.0000e-02  eta: 0:01:02  time: 0.2000  "
        "data_time: 0.0200  loss: 0.6000  loss_cls: 0.3000"
    )
    # the console's: 105 characters with data_time: it goes first (the tag keeps it), and
    # the one loss term equals `loss`: printed once
    assert line.console == (
        "Epoch(train)  [1][ 50/100]  lr: 1.0000e-02  eta: 0:01:02  time: 0.2000  loss: 0.6000"
    )
    assert tag["data_time"] == pytest.approx(0.02)
    narrow = LogProcessor(max_width=60).get_log_after_iter(make_runner(hub), 49, "train")[1]
    assert narrow.console == "Epoch(train)  [1][ 50/100]  eta: 0:01:02  loss: 0.6000"
    with pytest.raises(ValueError, match="max_width"):
        LogProcessor(max_width=10)


def test_the_console_wraps_rather_than_hide_a_loss_term():
    hub = train_hub()
    for name in ("loss_bbox", "loss_dfl", "loss_obj"):
        hub.update_scalar(f"train/{name}", 0.125)
    line = LogProcessor(max_width=60).get_log_after_iter(make_runner(hub), 49, "train")[1]
    terms = ["loss: 0.6000", "loss_cls: 0.3000", "loss_bbox: 0.1250", "loss_dfl: 0.1250",
             "loss_obj: 0.1250"]  # fmt: skip
    assert all(term in line for term in terms)  # the file's line
    assert all(term in line.console for term in terms)
    rows = line.console.split("\n")
    assert len(rows) > 1 and all(len(row) <= 60 for row in rows)
    assert all(row.startswith("    ") for row in rows[1:])


def test_fit_pieces_drops_the_lowest_rank_latest_first():
    pieces = [("head", 100), ("  a: 1", 20), ("  b: 2", 20), ("  c: 3  ", 50)]
    assert fit_pieces(pieces, None) == "head  a: 1  b: 2  c: 3  "
    assert fit_pieces(pieces, 16) == "head  a: 1  c: 3  "  # trailing spaces do not count
    assert fit_pieces(pieces, 1) == "head"


def test_several_loss_terms_are_all_printed_and_throughput_is_logged():
    hub = train_hub()
    hub.update_scalar("train/loss_box", 0.5)
    runner = make_runner(hub)
    runner.train_loop.dataloader.batch_size = 8
    runner.world_size = 2
    tag, line = LogProcessor(max_width=None).get_log_after_iter(runner, 49, "train")
    assert "loss: 0.6000  loss_cls: 0.3000  loss_box: 0.5000" in line
    # 8 samples per process x 2 processes in 0.2 s a step (the windowed mean)
    assert tag["samples_per_sec"] == pytest.approx(80.0)
    assert "samples/s: 80.0" in line


def test_epoch_lines_drop_timings_then_wrap_one_named_set_a_line():
    from cadence.hooks.log_processor import fit_items

    head = "Epoch(val) [1][1/1]  "
    items = ["clean/acc: 69.4444", "clean/loss: 1.1078", "noisy/acc: 44.8468",
             "noisy/loss: 1.5908", "time: 0.0593"]  # fmt: skip
    assert fit_items(head, items, 4, None) == head + "  ".join(items)  # mmengine's line
    assert fit_items(head, items, 4, 100) == head + "  ".join(items[:4])  # 96 columns
    assert fit_items(head, items, 4, 60) == (
        "Epoch(val) [1][1/1]  clean/acc: 69.4444  clean/loss: 1.1078\n"
        "    noisy/acc: 44.8468  noisy/loss: 1.5908"
    )


def test_a_lone_loss_term_is_printed_once_per_set():
    from cadence.hooks.log_processor import _lone_loss_terms

    tag = {"a/loss": 1.0, "a/loss_cls": 1.0, "b/loss": 2.0, "b/loss_cls": 1.5, "b/loss_box": 0.5}
    assert _lone_loss_terms(tag) == ["a/loss_cls"]


def test_tokens_per_second_tflops_and_mfu_join_the_line_and_the_tag(monkeypatch):
    monkeypatch.setenv("CADENCE_PEAK_FLOPS", "100e12")
    hub = train_hub()  # step time: the mean of 0.1, 0.2, 0.3 = 0.2 s
    for tokens in (400, 500, 600):
        hub.update_scalar("train/num_tokens", tokens)
    hub.update_info("flops_per_step", 4e12)
    tag, line = LogProcessor(max_width=None).get_log_after_iter(make_runner(hub), 49, "train")
    assert tag["tokens_per_sec"] == pytest.approx(500 / 0.2)
    assert tag["tflops"] == pytest.approx(20.0) and tag["mfu"] == pytest.approx(0.2)
    assert "tokens/s: 2500" in line and "TFLOP/s: 20" in line and "mfu: 20.0%" in line
