"""The ``cadence`` command line: ``print-config``."""

from __future__ import annotations

import json
import textwrap

import pytest

from cadence.cli import main
from cadence.config import Config

GRANDPARENT = """\
model = dict(
    type='M',
    depth=50)
lr = 0.1
pipeline = [dict(type='Load'), dict(type='Resize', size=(2, 3))]
"""
PARENT = """\
_base_ = './grandparent.py'
model = dict(depth=101)
"""
CHILD = """\
_base_ = './parent.py'
lr = 0.01
pipeline = [dict(type='Load'),
            dict(type='Flip', prob=0.5)]
name = 'exp'
"""


def run(argv):
    """Run the CLI and return its exit code (returned or raised as SystemExit)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.fixture
def configs(tmp_path):
    for name, text in (
        ("grandparent.py", GRANDPARENT),
        ("parent.py", PARENT),
        ("child.py", CHILD),
    ):
        (tmp_path / name).write_text(text)
    return tmp_path


def line_with(text, needle):
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_print_config_prints_loadable_python(configs, capsys, tmp_path):
    assert run(["print-config", str(configs / "child.py")]) == 0
    out = capsys.readouterr().out
    (tmp_path / "printed.py").write_text(out)
    assert Config.fromfile(tmp_path / "printed.py") == Config.fromfile(configs / "child.py")
    assert Config.fromfile(tmp_path / "printed.py").to_dict() == {
        "model": {"type": "M", "depth": 101},
        "lr": 0.01,
        "pipeline": [{"type": "Load"}, {"type": "Flip", "prob": 0.5}],
        "name": "exp",
    }


def test_print_config_as_json(configs, capsys):
    assert run(["print-config", str(configs / "child.py"), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "model": {"type": "M", "depth": 101},
        "lr": 0.01,
        "pipeline": [{"type": "Load"}, {"type": "Flip", "prob": 0.5}],
        "name": "exp",
    }


def test_print_config_with_cfg_options(configs, capsys):
    argv = [
        "print-config",
        str(configs / "child.py"),
        "--format",
        "json",
        "--cfg-options",
        "model.depth=18",
        "pipeline.1.prob=0.25",
        "new=[1,2]",
    ]
    assert run(argv) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["model"] == {"type": "M", "depth": 18}
    assert data["pipeline"][1] == {"type": "Flip", "prob": 0.25}
    assert data["new"] == [1, 2]


def test_print_config_provenance(configs, capsys):
    assert run(["print-config", str(configs / "child.py"), "--provenance"]) == 0
    out = capsys.readouterr().out
    gp, parent, child = (str(configs / n) for n in ("grandparent.py", "parent.py", "child.py"))
    expected = {
        "model.type": ("'M'", gp, line_with(GRANDPARENT, "type='M'")),
        "model.depth": ("101", parent, line_with(PARENT, "depth=101")),
        "lr": ("0.01", child, line_with(CHILD, "lr = 0.01")),
        "pipeline.0.type": ("'Load'", child, line_with(CHILD, "'Load'")),
        "pipeline.1.type": ("'Flip'", child, line_with(CHILD, "'Flip'")),
        "pipeline.1.prob": ("0.5", child, line_with(CHILD, "prob=0.5")),
        "name": ("'exp'", child, line_with(CHILD, "name = 'exp'")),
    }
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == len(expected)
    for key, (value, filename, line) in expected.items():
        matching = [x for x in lines if x.startswith(f"{key} ")]
        assert len(matching) == 1, key
        assert value in matching[0], key
        assert f"{filename}:{line}" in matching[0], key


def test_print_config_provenance_of_cfg_options(configs, capsys):
    argv = ["print-config", str(configs / "child.py"), "--provenance", "--cfg-options", "lr=0.5"]
    assert run(argv) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("lr ")]
    assert "0.5" in line and "--cfg-options" in line


def test_print_config_missing_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run(["print-config", "missing.py"]) == 2
    captured = capsys.readouterr()
    err_lines = captured.err.strip().splitlines()
    assert len(err_lines) == 1
    assert "missing.py" in err_lines[0]
    assert "error" in err_lines[0]
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_print_config_broken_config(tmp_path, capsys):
    (tmp_path / "broken.py").write_text(textwrap.dedent("a = 1\nb = a +\n"))
    assert run(["print-config", str(tmp_path / "broken.py")]) == 2
    captured = capsys.readouterr()
    assert f"{tmp_path / 'broken.py'}:2" in captured.err
    assert "Traceback" not in captured.err


def test_print_config_bad_cfg_options_entry(configs, capsys):
    argv = ["print-config", str(configs / "child.py"), "--cfg-options", "lr"]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert "'lr'" in err
    assert "Traceback" not in err


def test_print_config_out_of_range_cfg_option(configs, capsys):
    argv = ["print-config", str(configs / "child.py"), "--cfg-options", "pipeline.7.type=X"]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert "pipeline.7" in err
    assert "Traceback" not in err
