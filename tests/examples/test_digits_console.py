"""examples/digits: what a run prints on the console — a few short lines before the first
iteration, lines that fit 100 columns, the loss once, and a summary at the end."""

from __future__ import annotations

import os
import sys

from example_runner import ROOT

sys.path.insert(0, ROOT)
import sklearn  # noqa: E402, F401  (in the `test` extra: a missing package fails, not skips)

from cadence.cli import main  # noqa: E402

CONFIG = os.path.join(ROOT, "examples", "digits", "configs", "cnn_1xb32_digits.py")
SHORT = [  # one epoch of 4 batches of 8, validation on 16 images: about a second
    "train_cfg.max_epochs=1", "train_cfg.val_interval=1", "default_hooks.logger.interval=2",
    "train_dataloader.batch_size=8", "train_dataloader.num_batch_per_epoch=4",
    "val_dataloader.clean.batch_size=16", "val_dataloader.clean.num_batch_per_epoch=1",
    "val_dataloader.noisy.batch_size=16", "val_dataloader.noisy.num_batch_per_epoch=1",
]  # fmt: skip


def test_console_before_the_first_iteration_is_short_and_every_line_fits(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # a work dir as short as the example's own
    work_dir = tmp_path / "work"
    assert main(["train", CONFIG, "--work-dir", "work", "--cfg-options", *SHORT]) == 0
    lines = capsys.readouterr().out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("Epoch(train)"))
    assert first <= 15, "\n".join(lines[:first])
    wide = [line for line in lines if len(line) > 100]
    assert wide == []
    head = "\n".join(lines[:first])
    assert "SingleDeviceStrategy on cpu, world size 1" in head
    assert "model: DigitsCNN, 28,842 parameters (28,842 trainable)" in head
    # num_batch_per_epoch: the first 4 x 8 = 32 samples make the epoch
    assert "data: train 32 samples in 4 batches of 8, val clean 16, noisy 16 samples" in head
    assert "work_dir: work " in head and "start: epoch 1 of 1" in head
    train_lines = [line for line in lines if line.startswith("Epoch(train)")]
    assert len(train_lines) == 2 and all(" loss: " in line for line in train_lines)
    assert not any("loss_cls" in line for line in train_lines)  # the loss is printed once
    assert all("samples/s: " in line for line in train_lines)
    # the end-of-training summary
    end = lines.index(next(line for line in lines if line.startswith("Training finished in")))
    assert "(1 epoch, 4 iterations)" in lines[end]
    assert lines[end + 1].split() == ["metric", "last", "best"]
    assert [line.split()[0] for line in lines[end + 2 : end + 6]] == [
        "clean/accuracy/top1", "clean/loss", "noisy/accuracy/top1", "noisy/loss"]  # fmt: skip
    assert len(lines[end + 2].split()) == 3
    assert f"last checkpoint: {os.path.join('work', 'epoch_1.pth')}" in lines
    assert any(line.startswith("best checkpoint: ") for line in lines[end:])
    assert lines[-1].startswith("plot: `cadence plot work` draws the curves of ")
    # the details are in the work dir, not on the console
    (log_dir,) = [p for p in work_dir.iterdir() if p.is_dir()]
    assert "before_train_iter:" in (log_dir / "hooks.txt").read_text()
    log = next(log_dir.glob("*.log")).read_text()
    assert "Environment:" in log and "Hooks:" in log and "Config:" in log
    assert "Environment:" not in head and "Hooks:" not in head
