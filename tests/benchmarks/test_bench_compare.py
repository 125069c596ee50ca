"""benchmarks/compare.py: figures written by bench_results.py, compared with noise."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_results  # noqa: E402
import compare  # noqa: E402


def _record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sub: str, figures: dict) -> dict:
    monkeypatch.setenv("BENCH_RESULTS", str(tmp_path / sub))
    path = bench_results.write("toy", figures)
    return json.loads(path.read_text())


def test_a_slowdown_beyond_the_spread_is_flagged(tmp_path, monkeypatch):
    old = _record(tmp_path, monkeypatch, "old", {
        "time_s": bench_results.figure([1.0, 1.1, 1.2], "s"),  # median 1.1, spread 0.1
        "rate": bench_results.figure([100, 100], "files/s", better="higher"),
        "stable_s": bench_results.figure([2.0, 2.4], "s"),  # spread 0.2
    })  # fmt: skip
    new = _record(tmp_path, monkeypatch, "new", {
        "time_s": bench_results.figure([1.3, 1.35, 1.4], "s"),  # +0.25 > 0.1
        "rate": bench_results.figure([120, 121], "files/s", better="higher"),
        "stable_s": bench_results.figure([2.3, 2.3], "s"),  # +0.1 < 0.2: noise
        "added": bench_results.figure([5], "us"),
    })  # fmt: skip
    rows = {r.figure: r for r in compare.compare_records("toy", old, new)}
    assert rows["time_s"].verdict == "REGRESSION"
    assert rows["time_s"].old == 1.1 and rows["time_s"].new == 1.35
    assert rows["time_s"].change == pytest.approx(1.35 / 1.1 - 1)
    assert rows["rate"].verdict == "better"  # higher is better here
    assert rows["stable_s"].verdict == "same"
    assert rows["added"].verdict == "new"
    assert old["benchmark"] == "toy" and old["machine"]["cpus"] and old["commit"]


def test_a_figure_no_longer_measured_is_reported_gone():
    old = {"figures": {"x": {"value": 1.0, "spread": 0.0, "unit": "s", "better": "lower"}}}
    rows = compare.compare_records("toy", old, {"figures": {}})
    assert [(r.figure, r.verdict, r.new) for r in rows] == [("x", "gone", None)]


def test_a_change_below_the_printed_precision_is_not_a_verdict():
    # One round each (spread 0): a float that moved in its last digits prints as 0.0 %.
    old = {"figures": {"x": {"value": 1092.0, "spread": 0.0, "unit": "instr", "better": "lower"}}}
    tiny = {"figures": {"x": {"value": 1092.3, "spread": 0.0, "unit": "instr", "better": "lower"}}}
    real = {"figures": {"x": {"value": 1096.0, "spread": 0.0, "unit": "instr", "better": "lower"}}}
    assert compare.compare_records("toy", old, tiny)[0].verdict == "same"
    assert compare.compare_records("toy", old, real)[0].verdict == "REGRESSION"


def test_absolute_times_from_another_machine_are_shown_not_judged():
    def record(processor: str, seconds: float, ratio: float) -> dict:
        return {
            "machine": {"processor": processor, "cpus": 2},
            "figures": {
                "iter_s": {"value": seconds, "spread": 0.0, "unit": "s", "better": "lower"},
                "ratio": {"value": ratio, "spread": 0.0, "unit": "x", "better": "lower"},
            },
        }  # fmt: skip

    old = record("AMD EPYC", 1.0, 1.10)
    slower_cpu = record("Intel Xeon", 1.6, 1.30)
    rows = {r.figure: r for r in compare.compare_records("toy", old, slower_cpu)}
    assert rows["iter_s"].verdict == "other machine"  # a slower CPU is no regression
    assert rows["ratio"].verdict == "REGRESSION"  # a ratio of one run still counts
    same = {r.figure: r for r in compare.compare_records("toy", old, record("AMD EPYC", 1.6, 1.1))}
    assert same["iter_s"].verdict == "REGRESSION"
    assert compare.same_machine(old, {"figures": {}})  # older records name no machine
