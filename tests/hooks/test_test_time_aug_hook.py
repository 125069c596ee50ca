"""PrepareTTAHook wraps the runner's model in the TTA model before testing, and
build_runner_with_tta also swaps in the TTA pipeline."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

from cadence.config import ConfigAssertionError
from cadence.dataset import pseudo_collate
from cadence.evaluator import BaseMetric
from cadence.hooks.test_time_aug_hook import PrepareTTAHook, build_runner_with_tta
from cadence.model import BaseModel, BaseTTAModel
from cadence.runner import Runner


class Echo(BaseModel):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(()))

    def forward(self, inputs, data_samples=None, mode="tensor"):
        return [float(x) for x in inputs]


class SumViews(BaseTTAModel):
    def merge_preds(self, data_samples_list):
        return [sum(views) for views in data_samples_list]


class Collect(BaseMetric):
    default_prefix = "tta"

    def process(self, data_batch, data_samples):
        self.results.extend(data_samples)

    def compute_metrics(self, results):
        return {"total": sum(results)}


def two_views(value: float) -> dict:
    return dict(inputs=[torch.tensor(value), torch.tensor(10 * value)], data_samples=[0, 0])


def test_the_model_is_wrapped_before_testing(tmp_path) -> None:
    loader = DataLoader([two_views(1.0), two_views(2.0)], batch_size=2, collate_fn=pseudo_collate)
    runner = Runner(
        model=Echo(),
        work_dir=str(tmp_path),
        test_dataloader=loader,
        test_cfg=dict(),
        test_evaluator=Collect(),
        custom_hooks=[PrepareTTAHook(dict(type=SumViews))],
        default_hooks=dict(checkpoint=None),
    )
    metrics = runner.test()
    assert isinstance(runner.model, SumViews) and isinstance(runner.model.module, Echo)
    assert metrics["tta/total"] == pytest.approx(1 + 10 + 2 + 20)  # each sample's views summed


def test_build_runner_with_tta_needs_both_keys() -> None:
    with pytest.raises(ConfigAssertionError, match="tta_pipeline"):
        build_runner_with_tta(dict(tta_model=dict(type=SumViews)))
