"""The runner's logging across runs: the visualizer closes after each run and reopens for
the next; a loop that raises leaves no live progress bar behind."""

from __future__ import annotations

import io
import json

import pytest

from cadence.hooks import Hook
from cadence.logging import progress as progress_module
from cadence.runner import Runner


def toy_runner(tmp_path, **overrides) -> Runner:
    loader = dict(
        batch_size=16,
        num_workers=0,
        dataset=dict(type="Blobs", n=64, seed=0),
        sampler=dict(type="DefaultSampler", shuffle=False),
    )
    cfg = dict(
        model=dict(type="ToyClassifier", hidden=8),
        work_dir=str(tmp_path / "work"),
        train_dataloader=loader,
        train_cfg=dict(by_epoch=False, max_iters=6),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        test_dataloader={**loader, "dataset": dict(type="Blobs", n=32, seed=1)},
        test_cfg=dict(),
        test_evaluator=dict(type="Accuracy"),
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=2, progress="off"), checkpoint=None
        ),  # fmt: skip
        log_processor=dict(by_epoch=False),
    )
    cfg.update(overrides)
    return Runner.from_cfg(cfg)


def test_test_after_train_logs_again_into_the_same_scalar_log(tmp_path):
    runner = toy_runner(tmp_path)
    runner.train()
    backend = runner.visualizer.get_backend("LocalVisBackend")
    assert backend._files == {}  # after_run closed the visualizer
    path = tmp_path / "work" / runner.timestamp / "vis_data" / "scalars.json"
    train_lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["step"] for line in train_lines] == [2, 4, 6]

    metrics = runner.test()
    assert backend._files == {}  # closed again after the test run
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[:3] == train_lines  # appended, not truncated
    assert len(lines) == 4 and lines[3]["accuracy/top1"] == pytest.approx(metrics["accuracy/top1"])
    # as mmengine's LoggerHook: the same JSON lines also in vis_data/<timestamp>.json
    assert (path.parent / f"{runner.timestamp}.json").read_text() == path.read_text()


class BoomAt(Hook):
    def __init__(self, at: int) -> None:
        self.at = at

    def after_train_iter(self, runner, batch_idx, data_batch=None, outputs=None):
        if runner.iter + 1 == self.at:
            raise RuntimeError("boom in the loop")


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_loop_that_raises_leaves_no_live_bar(tmp_path, monkeypatch):
    from rich.console import Console

    screen = FakeTerminal()
    monkeypatch.setattr(
        progress_module, "_default_console", lambda: Console(file=screen, force_terminal=True)
    )
    runner = toy_runner(
        tmp_path,
        default_hooks=dict(
            logger=dict(type="LoggerHook", interval=2, progress="bar"), checkpoint=None
        ),  # fmt: skip
    )
    runner.register_hook(BoomAt(4))
    with pytest.raises(RuntimeError, match="boom in the loop"):
        runner.train()
    assert not list(progress_module._live_bars)
    logger_hook = next(h for h in runner.hooks if type(h).__name__ == "LoggerHook")
    assert logger_hook._bar is not None and not logger_hook._bar.active
    drawn = screen.getvalue()
    assert "\x1b[?25l" in drawn  # the bar hid the cursor ...
    # ... and gave it back after hiding it last (the bar, transient, is then erased)
    assert "\x1b[?25h" in drawn[drawn.rindex("\x1b[?25l") :]
    assert drawn.endswith("\x1b[2K")  # the bar's line is cleared
