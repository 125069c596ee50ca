"""examples/mmengine_style: an OpenMMLab project whose only change is ``s/mmengine/cadence/``.

Its own unit tests (``examples/mmengine_style/tests``, on ``RunnerTestCase``) are
collected by pytest (``testpaths`` in pyproject.toml); this runs its unmodified
``tools/train.py`` and ``tools/test.py`` as ``__main__`` from the project root, as a user would.
"""

from __future__ import annotations

import os
import pickle
import runpy
import sys
from pathlib import Path

import pytest
from example_runner import ROOT

PROJECT = os.path.join(ROOT, "examples", "mmengine_style")
CONFIG = "configs/toynet/toynet_1xb8-4e_points.py"


def _run_script(
    monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str], script: str, *args: str
) -> str:
    """Run the project's ``script`` as ``__main__`` with ``args``, from the project root (as
    ``python tools/x.py ...`` there would, in this process to spare an interpreter start)."""
    monkeypatch.chdir(PROJECT)
    monkeypatch.setattr(sys, "argv", [script, *args])
    monkeypatch.setenv("LOCAL_RANK", "0")  # else the scripts set it, for later tests too
    runpy.run_path(script, run_name="__main__")
    out, err = capfd.readouterr()
    return out + err


def test_train_script_trains_and_test_script_evaluates_its_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    work_dir = str(tmp_path / "work")
    options = ["train_cfg.max_epochs=2", "default_hooks.logger.interval=8"]
    log = _run_script(monkeypatch, capfd, "tools/train.py", CONFIG, "--work-dir", work_dir,
                      "--cfg-options", *options)  # fmt: skip
    # the custom hook (custom_imports + default_scope 'toyproj') ran
    assert "LossTrendHook: best smoothed loss" in log
    assert "Epoch(val) [2][2/2]" in log
    # max_keep_ckpts=1 in the config: only the last checkpoint is kept
    assert sorted(f for f in os.listdir(work_dir) if f.endswith(".pth")) == ["epoch_2.pth"]

    # runner_type set: the script builds the runner with RUNNERS.build(cfg)
    out_file = str(tmp_path / "preds.pkl")
    log = _run_script(monkeypatch, capfd, "tools/test.py", CONFIG,
                      os.path.join(work_dir, "epoch_2.pth"), "--work-dir", str(tmp_path / "test"),
                      "--out", out_file, "--cfg-options", "runner_type=Runner")  # fmt: skip
    assert "Epoch(test) [2/2]" in log and "accuracy/top1:" in log
    with open(out_file, "rb") as f:
        predictions = pickle.load(f)
    assert len(predictions) == 32  # the val split, dumped by DumpResults
    assert {"pred_label", "gt_label"} <= set(predictions[0])


def test_config_passes_the_checker() -> None:
    from cadence.cli.config_check import check_config
    from cadence.config import Config

    checker = check_config(Config.fromfile(os.path.join(PROJECT, CONFIG)))
    assert checker.problems == [], "\n".join(map(str, checker.problems))
    assert checker.checked > 10
