"""ProfilerHook: a Chrome trace of exactly the profiled window, in the run's log directory."""

from __future__ import annotations

import collections
import json
import os

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from cadence.evaluator import BaseMetric
from cadence.hooks import ProfilerHook
from cadence.registry import HOOKS
from cadence.runner import Runner


class Reg(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x, y, mode="tensor"):
        out = self.fc(x)
        return {"loss": ((out - y) ** 2).mean()} if mode == "loss" else out


def train(tmp_path, epochs=2, **hook) -> Runner:
    data = TensorDataset(torch.randn(12, 3), torch.randn(12, 1))
    runner = Runner(
        model=Reg(),
        work_dir=str(tmp_path),
        train_dataloader=DataLoader(data, batch_size=4),  # 3 iterations per epoch
        train_cfg=dict(max_epochs=epochs),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.01)),
        custom_hooks=[dict(type="ProfilerHook", **hook)],
        default_hooks=dict(checkpoint=None),
    )
    runner.train()
    return runner


def event_counts(path: str) -> collections.Counter:
    with open(path) as f:
        trace = json.load(f)
    return collections.Counter(e.get("name") for e in trace["traceEvents"])


def test_first_epoch_is_traced_to_the_log_dir(tmp_path):
    runner = train(tmp_path)
    path = os.path.join(runner.log_dir, "profiler_trace.json")
    counts = event_counts(path)
    # one forward (linear) and one optimizer step per iteration of the first epoch only
    assert counts["aten::linear"] == 3
    assert counts["Optimizer.step#SGD.step"] == 3


def test_iterations_window_and_relative_path(tmp_path):
    runner = train(tmp_path, by_epoch=False, profile_times=2, json_trace_path="prof/t.json")
    counts = event_counts(os.path.join(runner.log_dir, "prof", "t.json"))
    assert counts["aten::linear"] == 2


def test_schedule_records_only_its_active_steps(tmp_path):
    schedule = dict(wait=1, warmup=1, active=1)
    runner = train(tmp_path, by_epoch=False, profile_times=3, schedule=schedule)
    counts = event_counts(os.path.join(runner.log_dir, "profiler_trace.json"))
    assert counts["aten::linear"] == 1 and counts["ProfilerStep#2"] == 1


def test_training_shorter_than_the_window_still_writes_the_trace(tmp_path):
    runner = train(tmp_path, epochs=1, by_epoch=True, profile_times=3)
    assert event_counts(os.path.join(runner.log_dir, "profiler_trace.json"))["aten::linear"] == 3


def test_on_trace_ready_callable_replaces_the_default_file(tmp_path):
    seen = []
    runner = train(tmp_path, on_trace_ready=lambda prof: seen.append(prof.key_averages()))
    assert len(seen) == 1
    assert any(evt.key == "aten::linear" for evt in seen[0])
    assert not os.path.exists(os.path.join(runner.log_dir, "profiler_trace.json"))


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="profile_times"):
        ProfilerHook(profile_times=0)
    with pytest.raises(TypeError, match="by_epoch"):
        ProfilerHook(by_epoch="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Did you mean .*'log_trace'"):
        ProfilerHook(on_trace_ready=dict(type="log_trac"))
    with pytest.raises(TypeError, match="schedule"):
        ProfilerHook(schedule=[1, 2])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="schedule"):
        ProfilerHook(schedule=dict())  # torch.profiler.schedule needs wait, warmup, active
    hook = HOOKS.build(dict(type="ProfilerHook", by_epoch=False, profile_times=4))
    assert isinstance(hook, ProfilerHook) and hook.profile_times == 4


def test_no_activity_chosen_profiles_torchs_default(tmp_path):
    runner = train(tmp_path, epochs=1, activity_with_cpu=False)
    assert event_counts(os.path.join(runner.log_dir, "profiler_trace.json"))["aten::linear"] == 3


class CountMetric(BaseMetric):
    default_prefix = "count"

    def process(self, data_batch, data_samples):
        self.results.extend([1] * len(data_samples))

    def compute_metrics(self, results):
        return {"n": len(results)}


def test_a_run_without_training_is_profiled_until_its_end(tmp_path):
    runner = Runner(
        model=Reg(),
        work_dir=str(tmp_path),
        test_dataloader=DataLoader(TensorDataset(torch.randn(8, 3), torch.randn(8, 1)), 4),
        test_cfg=dict(),
        test_evaluator=CountMetric(),
        custom_hooks=[dict(type="ProfilerHook")],
        default_hooks=dict(checkpoint=None),
    )
    runner.test()
    assert event_counts(os.path.join(runner.log_dir, "profiler_trace.json"))["aten::linear"] == 2


def test_npu_profiler_hook_names_its_missing_package():
    # torch_npu is absent here: building the hook says what it needs
    with pytest.raises(ImportError, match="torch_npu"):
        HOOKS.build(dict(type="NPUProfilerHook"))
