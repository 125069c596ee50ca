"""Reading scalars.json back: finding a run's log, keys, and curve positions (step and epoch)."""

from __future__ import annotations

import json
import os

import pytest

from cadence.visualization.scalar_log import (
    PlotError,
    ScalarLog,
    default_run_name,
    find_scalar_log,
    load_runs,
)

# What LoggerHook writes for 3 epochs of 4 iterations, interval 2, validation each epoch.
EPOCH_RUN = [
    {"lr": 0.1, "loss": 1.0, "time": 0.5, "epoch": 1, "iter": 2, "step": 2},
    {"lr": 0.1, "loss": 0.8, "time": 0.4, "epoch": 1, "iter": 4, "step": 4},
    {"accuracy/top1": 60.0, "time": 0.2, "step": 1},
    {"lr": 0.1, "loss": 0.6, "time": 0.4, "epoch": 2, "iter": 6, "step": 6},
    {"lr": 0.1, "loss": 0.5, "time": 0.4, "epoch": 2, "iter": 8, "step": 8},
    {"accuracy/top1": 80.0, "time": 0.2, "step": 2},
    {"lr": 0.01, "loss": 0.4, "time": 0.4, "epoch": 3, "iter": 10, "step": 10},
    {"lr": 0.01, "loss": 0.3, "time": 0.4, "epoch": 3, "iter": 12, "step": 12},
    {"accuracy/top1": 90.0, "time": 0.2, "step": 3},
]


def write_log(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_find_the_latest_run_of_a_work_dir(tmp_path):
    work = tmp_path / "exp"
    old = write_log(work / "20260101_000000" / "vis_data" / "scalars.json", [{"a": 1}])
    new = write_log(work / "20260202_000000" / "vis_data" / "scalars.json", [{"a": 2}])
    os.utime(old, (2e9, 2e9))  # written later, but the newer timestamp directory wins
    assert find_scalar_log(work) == str(new)
    assert find_scalar_log(work / "20260101_000000") == str(old)
    assert find_scalar_log(work / "20260101_000000" / "vis_data") == str(old)
    assert find_scalar_log(old) == str(old)


def test_missing_logs_are_explained(tmp_path):
    with pytest.raises(PlotError, match="no such file or directory"):
        find_scalar_log(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(PlotError, match=r"looked for .*/\*/vis_data/scalars.json"):
        find_scalar_log(tmp_path / "empty")


def test_bad_lines_name_the_file_and_line(tmp_path):
    path = tmp_path / "scalars.json"
    path.write_text('{"a": 1}\n\n{"a": \n')
    with pytest.raises(PlotError, match=r"scalars.json:3 is not a JSON line"):
        ScalarLog.load(path)
    path.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(PlotError, match=r"scalars.json:2 is not a JSON object"):
        ScalarLog.load(path)


def test_keys_skip_bookkeeping_and_non_numbers(tmp_path):
    path = write_log(tmp_path / "scalars.json", EPOCH_RUN + [{"vec": [1, 2], "flag": True}])
    assert ScalarLog.load(path).keys() == ["lr", "loss", "time", "accuracy/top1"]


def test_step_axis_puts_validation_at_the_iteration_that_ended_the_epoch(tmp_path):
    log = ScalarLog.load(write_log(tmp_path / "scalars.json", EPOCH_RUN))
    (loss,) = log.curves("loss")
    assert (loss.phase, loss.xs, loss.ys) == (
        "",
        [2, 4, 6, 8, 10, 12],
        [1.0, 0.8, 0.6, 0.5, 0.4, 0.3],
    )
    (acc,) = log.curves("accuracy/top1")
    assert (acc.xs, acc.ys) == ([4, 8, 12], [60.0, 80.0, 90.0])
    train, evaluation = log.curves("time")  # logged by both: two curves
    assert (train.phase, train.xs) == ("train", [2, 4, 6, 8, 10, 12])
    assert (evaluation.phase, evaluation.xs, evaluation.ys) == ("eval", [4, 8, 12], [0.2] * 3)
    assert log.curves("missing") == []


def test_step_axis_keeps_validation_logged_by_iteration(tmp_path):
    records = [
        {"loss": 1.0, "iter": 5, "step": 5},
        {"loss": 0.9, "iter": 10, "step": 10},
        {"accuracy/top1": 50.0, "step": 10},
        {"accuracy/top1": 55.0, "step": 12},  # e.g. a test run at iteration 12
    ]
    log = ScalarLog.load(write_log(tmp_path / "scalars.json", records))
    (acc,) = log.curves("accuracy/top1")
    assert acc.xs == [10, 12]


def test_epoch_axis_is_fractional_for_training_and_whole_for_validation(tmp_path):
    log = ScalarLog.load(write_log(tmp_path / "scalars.json", EPOCH_RUN))
    (loss,) = log.curves("loss", x="epoch")
    assert loss.xs == [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]  # 4 iterations per epoch
    (acc,) = log.curves("accuracy/top1", x="epoch")
    assert acc.xs == [1.0, 2.0, 3.0]


def test_epoch_axis_estimates_epoch_length_when_the_last_batch_is_not_logged(tmp_path):
    # 10 iterations per epoch, interval 3, ignore_last: logged at 3, 6, 9 then 13, 16, 19
    records = [{"loss": 1.0, "epoch": 1 + (i > 10), "iter": i, "step": i} for i in (3, 6, 9)]
    records += [{"loss": 1.0, "epoch": 2, "iter": i, "step": i} for i in (13, 16, 19)]
    (loss,) = ScalarLog.load(write_log(tmp_path / "s.json", records)).curves("loss", x="epoch")
    assert loss.xs == pytest.approx([0.3, 0.6, 0.9, 1.3, 1.6, 1.9])


def test_epoch_axis_needs_epoch_based_training(tmp_path):
    records = [{"loss": 1.0, "iter": 5, "step": 5}]
    log = ScalarLog.load(write_log(tmp_path / "scalars.json", records))
    with pytest.raises(PlotError, match="trains by iteration; use --x step"):
        log.curves("loss", x="epoch")
    with pytest.raises(PlotError, match="x must be one of"):
        log.curves("loss", x="time")


def test_run_names_come_from_the_work_dir_and_stay_unique(tmp_path):
    first = write_log(tmp_path / "a" / "exp" / "20260101_000000" / "vis_data" / "scalars.json", [])
    second = write_log(tmp_path / "b" / "exp" / "20260102_000000" / "vis_data" / "scalars.json", [])
    third = write_log(tmp_path / "loose" / "scalars.json", [])
    assert default_run_name(str(first)) == "exp"
    assert default_run_name(str(third)) == "loose"
    runs = load_runs([str(tmp_path / "a" / "exp"), str(tmp_path / "b" / "exp"), str(third)])
    assert [run.name for run in runs] == ["exp/20260101_000000", "exp/20260102_000000", "loose"]
    assert runs[1].path == str(second)
