"""Config mistakes that types and argument names cannot catch: ``check`` reports each with
its key path and origin, and ``train`` stops with the same words before doing any work."""

from __future__ import annotations

import os

import pytest

from cadence.cli import main

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "examples", "blobs", "configs", "mlp_8xb64_blobs.py")
BASE = os.path.join("examples", "blobs", "configs", "_base_", "datasets", "blobs16.py")

MISTAKES = [
    ("train_dataloader.batch_size=abc",
     "error: train_dataloader.batch_size (--cfg-options): must be an int > 0"),
    ("train_dataloader.num_workers=-1",
     "error: train_dataloader.num_workers (--cfg-options): must be an int >= 0, got -1"),
    ("train_cfg.val_interval=0",
     "error: train_cfg.val_interval (--cfg-options): must be an int >= 1"),
    ("train_cfg.max_epochs=-1", "error: train_cfg.max_epochs (--cfg-options): must be an int > 0"),
    ("optim_wrapper.optimizer.lr=x",
     "error: optim_wrapper.optimizer.lr (--cfg-options): must be a number, got 'x'"),
    ("env_cfg=3", "error: env_cfg (--cfg-options): must be a dict, got int 3"),
    ("custom_hooks=3", "error: custom_hooks (--cfg-options): must be a list or a tuple"),
    ("default_hooks.logger.interval=0",  # issue 27: check said OK, train crashed
     "error: default_hooks.logger.interval (--cfg-options): rejected by LoggerHook: "
     "LoggerHook.interval must be a positive int, got 0"),
    ("optim_wrapper.optimizer.lr=-1.0", "error: optim_wrapper.optimizer.lr (--cfg-options): "
     "rejected by AdamW: Invalid learning rate: -1.0"),
    ("default_hooks.checkpoint.interval=x",
     "error: default_hooks.checkpoint.interval (--cfg-options): must be int, got 'x'"),
    ("val_evaluator=None", f"error: val_dataloader ({BASE}:10): is set, so val_evaluator "
     "must be too"),
    ("train_cfg=None", f"error: train_dataloader ({BASE}:3): is set, so train_cfg must be too"),
]  # fmt: skip


@pytest.mark.parametrize(("option", "expected"), MISTAKES)
def test_check_and_train_report_the_same_error(tmp_path, capsys, blobs, option, expected):
    assert main(["check", CONFIG, "--cfg-options", option]) == 2
    checked = capsys.readouterr().out
    assert expected in checked, checked
    work = tmp_path / "work"
    assert main(["train", CONFIG, "--work-dir", str(work), "--cfg-options", option]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err and "`cadence check`" in err
    assert not work.exists()  # stopped before any work


def test_the_example_config_passes(capsys, blobs):
    assert main(["check", CONFIG]) == 0
    assert "config OK" in capsys.readouterr().out


def test_the_runner_refuses_the_same_values_naming_the_config_key(tmp_path, blobs):
    """Built without `cadence train` (whose check comes first), the hook used to fail with
    a ValueError traceback naming 'hooks.logger'."""
    from cadence.cli.common import load_config
    from cadence.registry.constraints import ConstraintError
    from cadence.runner import Runner

    cfg = load_config(CONFIG, ["default_hooks.logger.interval=0"])
    cfg.work_dir = str(tmp_path / "work")
    with pytest.raises(ConstraintError) as refused:
        Runner.from_cfg(cfg).train()
    assert "config key 'default_hooks.logger.interval' (set at --cfg-options)" in str(refused.value)
