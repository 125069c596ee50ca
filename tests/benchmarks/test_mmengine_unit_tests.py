"""benchmarks/mmengine_unit_tests.py: its pytest plugin's records, and the parity count."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import mmengine_unit_tests as mut  # noqa: E402

TOY = """
import time
import pytest

def test_passes():
    assert 1 + 1 == 2

def test_fails():
    assert [1] == [2], "lists differ"

def test_hangs():
    time.sleep(30)

@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")

def test_setup_error(broken):
    pass

def test_skipped():
    pytest.skip("no GPU")
"""


def test_the_plugin_records_each_outcome_and_stops_a_hanging_test(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_toy.py").write_text(TOY)
    (tmp_path / "tests" / "test_bad.py").write_text("import no_such_module_here\n")
    results = tmp_path / "out.jsonl"
    env = mut.side_env(tmp_path / "no_extras", False, results, 1.0)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        *mut.PYTEST_ARGS,
        "-c",
        os.devnull,
        "--rootdir",
        str(tmp_path),
        "tests/test_toy.py",
        "tests/test_bad.py",
    ]
    subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, timeout=60)
    side = mut.Side()
    collected = mut.read_results(results, side)
    assert len(collected) == 5
    got = {t.split("::")[1]: o for t, o in side.outcomes.items()}
    assert got["test_passes"] == ("passed", "")
    assert got["test_fails"][0] == "failed" and "lists differ" in got["test_fails"][1]
    assert got["test_hangs"][0] == "failed" and "per-test limit" in got["test_hangs"][1]
    assert got["test_setup_error"] == ("error", "setup: RuntimeError: fixture broke")
    assert got["test_skipped"][0] == "skipped"
    assert "No module named 'no_such_module_here'" in side.collect_errors["tests/test_bad.py"]


def test_only_tests_the_reference_passes_are_counted(capsys):
    ref = mut.Side(
        {
            "a.py::t1": ("passed", ""),
            "a.py::t2": ("passed", ""),
            "b.py::t3": ("passed", ""),
            "a.py::t4": ("failed", "needs a GPU"),
        }
    )
    cad = mut.Side(
        {
            "a.py::t1": ("passed", ""),
            "a.py::t2": ("failed", "AssertionError: x"),
            "a.py::t4": ("passed", ""),
        },
        collect_errors={"b.py": "ImportError: cannot import name 'Y'"},
    )
    counted, result = mut.report(ref, cad, top=5)
    assert counted == ["a.py::t1", "a.py::t2", "b.py::t3"]
    assert result["b.py::t3"] == ("missing", "collection: ImportError: cannot import name 'Y'")
    out = capsys.readouterr().out
    assert "tests mmengine 0.10.7 passes: 3" in out
    assert "cadence passes:     1  (33.3 %)" in out


def test_write_keeps_details_beside_the_figures(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCH_RESULTS", str(tmp_path))
    path = mut.write(
        "toy",
        {"n": mut.figure([3], "tests", "higher")},
        details={"tests": {"a.py::t1": ["passed", ""]}},
    )
    record = json.loads(path.read_text())
    assert record["details"] == {"tests": {"a.py::t1": ["passed", ""]}}
    assert record["figures"]["n"]["value"] == 3


def test_a_folder_whose_pytest_dies_is_resumed_after_the_test_it_died_in(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_exit.py").write_text(
        "import os\n\ndef test_a():\n    pass\n\ndef test_b():\n    os._exit(3)\n\n"
        "def test_c():\n    pass\n"
    )
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")
    args = argparse.Namespace(
        restarts=2, extras=tmp_path / "no_extras", timeout=30.0, group_timeout=60.0
    )
    side = mut.Side()
    collected = mut._run_group(
        "t",
        sys.executable,
        False,
        ["tests/test_exit.py"],
        tmp_path,
        ini,
        side,
        args,
        deadline=time.monotonic() + 120,
    )
    assert [c.split("::")[1] for c in collected] == ["test_a", "test_b", "test_c"]
    got = {t.split("::")[1]: o[0] for t, o in side.outcomes.items()}
    assert got == {"test_a": "passed", "test_b": "crashed", "test_c": "passed"}
