"""``cadence plot``: scalars.json files in, a PNG of the curves out; clear errors otherwise."""

from __future__ import annotations

import json
import struct
import sys

import pytest

from cadence.cli import main

TRAIN = [
    {
        "lr": 0.1,
        "loss": 1.2 - 0.1 * i,
        "epoch": 1 + i // 2,
        "iter": 2 * (i + 1),
        "step": 2 * (i + 1),
    }
    for i in range(6)
]
VAL = [{"accuracy/top1": 50.0 + 10 * e, "step": e} for e in (1, 2, 3)]


def records():
    """Training logs of 3 epochs with validation after each, as LoggerHook writes them."""
    return TRAIN[0:2] + VAL[0:1] + TRAIN[2:4] + VAL[1:2] + TRAIN[4:6] + VAL[2:3]


def make_run(work_dir, stamp="20260101_000000", scale=1.0):
    log = work_dir / stamp / "vis_data" / "scalars.json"
    log.parent.mkdir(parents=True)
    lines = [{k: (v * scale if k == "loss" else v) for k, v in r.items()} for r in records()]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log


def run(argv):
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_plot_two_work_dirs(tmp_path, capsys):
    make_run(tmp_path / "baseline")
    make_run(tmp_path / "bigger_lr", scale=0.5)
    out = tmp_path / "figs" / "curves.png"
    code = run(
        [
            "plot",
            str(tmp_path / "baseline"),
            str(tmp_path / "bigger_lr"),
            "--keys",
            "loss",
            "lr",
            "accuracy/top1",
            "--out",
            str(out),
        ]  # fmt: skip
    )
    assert code == 0
    assert f"saved {out} (3 keys, 2 runs)" in capsys.readouterr().out
    width, height = png_size(out)
    assert (width, height) == (1100, 720)  # 2 x 2 grid of 5.5 x 3.6 inch panels at 100 dpi
    assert out.stat().st_size > 10_000  # real curves, not an empty canvas


def test_plot_by_epoch_and_from_a_scalars_json_path(tmp_path):
    log = make_run(tmp_path / "exp")
    out = tmp_path / "epoch.png"
    assert run(["plot", str(log), "--x", "epoch", "--keys", "loss", "--out", str(out)]) == 0
    assert png_size(out) == (550, 360)  # one panel


def test_every_key_by_default(tmp_path, capsys):
    make_run(tmp_path / "exp")
    out = tmp_path / "all.png"
    assert run(["plot", str(tmp_path / "exp"), "--out", str(out)]) == 0
    assert "(3 keys, 1 runs)" in capsys.readouterr().out  # lr, loss, accuracy/top1


def test_unknown_keys_list_the_logged_ones(tmp_path, capsys):
    make_run(tmp_path / "exp")
    out = tmp_path / "x.png"
    assert run(["plot", str(tmp_path / "exp"), "--keys", "los", "acc", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("cadence: error: unknown keys 'los' (did you mean 'loss'?)")
    assert "'acc' (did you mean 'accuracy/top1'?)" in err
    assert "the runs log: lr, loss, accuracy/top1" in err
    assert not out.exists()


def test_missing_run_and_iteration_run_with_epoch_axis(tmp_path, capsys):
    assert run(["plot", str(tmp_path / "nothing"), "--out", str(tmp_path / "a.png")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    log = tmp_path / "iters" / "scalars.json"
    log.parent.mkdir()
    log.write_text(json.dumps({"loss": 1.0, "iter": 10, "step": 10}) + "\n")
    assert run(["plot", str(log), "--x", "epoch", "--out", str(tmp_path / "b.png")]) == 2
    assert "use --x step" in capsys.readouterr().err
    with pytest.raises(Exception, match="use --x step"):  # --debug shows the traceback
        main(["--debug", "plot", str(log), "--x", "epoch", "--out", str(tmp_path / "b.png")])


def test_without_matplotlib_exit_2_with_the_install_command(tmp_path, capsys, monkeypatch):
    make_run(tmp_path / "exp")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    assert run(["plot", str(tmp_path / "exp"), "--out", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "pip install matplotlib" in err and "cadence[plot]" in err
    assert not (tmp_path / "c.png").exists()
