"""A short training run with Local + TensorBoard backends: event files hold every logged
value at the step the LoggerHook gave it, and agree with scalars.json."""

from __future__ import annotations

import json

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
from vis_toys import loader, register_toys

from cadence.config import Config
from cadence.runner import Runner


@pytest.fixture(autouse=True)
def _toys() -> None:
    register_toys()


def test_training_writes_event_files_at_the_logged_steps(tmp_path):
    cfg = Config(
        dict(
            model=dict(type="TinyClassifier"),
            work_dir=str(tmp_path / "work"),
            train_dataloader=loader(128, 0, 32, True),  # 4 iterations per epoch
            val_dataloader=loader(64, 1, 64, False),
            train_cfg=dict(by_epoch=True, max_epochs=3, val_interval=1),
            val_cfg=dict(),
            val_evaluator=dict(type="Accuracy", topk=(1,)),
            optim_wrapper=dict(
                type="OptimWrapper",
                optimizer=dict(type="SGD", lr=0.1),
                clip_grad=dict(max_norm=5.0),
            ),
            default_hooks=dict(logger=dict(type="LoggerHook", interval=2)),
            visualizer=dict(
                type="Visualizer",
                vis_backends=[dict(type="LocalVisBackend"), dict(type="TensorboardVisBackend")],
            ),
        )
    )
    runner = Runner.from_cfg(cfg)
    runner.train()
    (data_dir,) = (tmp_path / "work").glob("*/vis_data")
    assert len(list(data_dir.glob("events.out.tfevents.*"))) == 1
    events = EventAccumulator(str(data_dir))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"loss", "loss_cls", "lr", "time", "data_time", "grad_norm", "accuracy/top1"} <= tags

    def steps(tag):
        return [event.step for event in events.Scalars(tag)]

    # interval 2, 4 iterations per epoch, 3 epochs: train logs after iterations 2, 4, ..., 12
    for tag in ("loss", "loss_cls", "lr", "grad_norm"):
        assert steps(tag) == [2, 4, 6, 8, 10, 12], tag
    # validation metrics are stepped by epoch (LoggerHook.log_metric_by_epoch)
    assert steps("accuracy/top1") == [1, 2, 3]
    # `time` and `data_time` are logged by training (per iteration) and validation (per epoch)
    for tag in ("time", "data_time"):
        assert steps(tag) == [2, 4, 1, 6, 8, 2, 10, 12, 3], tag
    assert [event.value for event in events.Scalars("lr")] == pytest.approx([0.1] * 6)

    # TensorBoard and scalars.json hold the same numbers (float32 in the event file)
    records = [json.loads(line) for line in (data_dir / "scalars.json").read_text().splitlines()]
    train = [r for r in records if "iter" in r]
    assert [r["step"] for r in train] == [2, 4, 6, 8, 10, 12]
    for tag in ("loss", "grad_norm"):
        values = [event.value for event in events.Scalars(tag)]
        assert values == pytest.approx([r[tag] for r in train], rel=1e-6)
    accuracy = [r["accuracy/top1"] for r in records if "accuracy/top1" in r]
    assert [event.value for event in events.Scalars("accuracy/top1")] == pytest.approx(accuracy)
    assert all(0.0 <= a <= 100.0 for a in accuracy)
    assert events.Tensors("config/text_summary")  # the runner recorded its config
