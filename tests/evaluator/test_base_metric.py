"""BaseMetric in one process: prefixes, clearing, warnings and errors."""

from __future__ import annotations

import logging

import pytest
import torch

from cadence.evaluator import BaseMetric


class SumMetric(BaseMetric):
    """Adds up the 'value' of every sample; remembers what compute_metrics received."""

    default_prefix = "sum"

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seen: list | None = None

    def process(self, data_batch, data_samples) -> None:
        self.results.extend(sample["value"] for sample in data_samples)

    def compute_metrics(self, results: list) -> dict:
        self.seen = list(results)
        return {"total": sum(float(r) for r in results), "count": len(results)}


def test_base_metric_is_abstract():
    with pytest.raises(TypeError):
        BaseMetric()  # type: ignore[abstract]


def test_evaluate_prefixes_names_and_clears_results():
    metric = SumMetric()
    metric.process(None, [{"value": 1}, {"value": 2}])
    metric.process(None, [{"value": 4}])
    assert metric.evaluate(3) == {"sum/total": 7.0, "sum/count": 3}
    assert metric.results == []


def test_evaluate_cuts_results_to_size():
    metric = SumMetric()
    metric.process(None, [{"value": v} for v in (1, 2, 4, 8)])
    assert metric.evaluate(2) == {"sum/total": 3.0, "sum/count": 2}


def test_prefix_argument_overrides_the_default():
    metric = SumMetric(prefix="val")
    metric.process(None, [{"value": 3}])
    assert metric.evaluate(1) == {"val/total": 3.0, "val/count": 1}


def test_no_prefix_warns_and_leaves_names_bare(current_log):
    class Bare(SumMetric):
        default_prefix = None

    metric = Bare()
    # a WARNING of the current logger, as mmengine logs it
    assert [r.levelno for r in current_log] == [logging.WARNING]
    assert "Bare has no prefix" in current_log[0].getMessage()
    metric.process(None, [{"value": 5}])
    assert metric.evaluate(1) == {"total": 5.0, "count": 1}


def test_empty_results_warn(current_log):
    metric = SumMetric()
    assert metric.evaluate(0) == {"sum/total": 0.0, "sum/count": 0}
    assert [r.levelno for r in current_log] == [logging.WARNING]
    assert "SumMetric.results is empty" in current_log[0].getMessage()


def test_tensors_reach_compute_metrics_on_the_cpu():
    metric = SumMetric()
    metric.process(None, [{"value": torch.tensor(2.0)}])
    metric.evaluate(1)
    assert metric.seen is not None and metric.seen[0].device.type == "cpu"


def test_a_failing_compute_raises_and_still_clears():
    class Broken(SumMetric):
        def compute_metrics(self, results):
            raise ZeroDivisionError("no samples of class 3")

    metric = Broken()
    metric.process(None, [{"value": 1}])
    with pytest.raises(ZeroDivisionError, match="class 3"):
        metric.evaluate(1)
    assert metric.results == []


def test_compute_metrics_must_return_a_dict():
    class ReturnsList(SumMetric):
        def compute_metrics(self, results):
            return [1]

    metric = ReturnsList()
    metric.process(None, [{"value": 1}])
    with pytest.raises(TypeError, match="must return a dict, got list"):
        metric.evaluate(1)


def test_constructor_checks_collect_options():
    with pytest.raises(ValueError, match="collect_device must be one of"):
        SumMetric(collect_device="tpu")
    with pytest.raises(ValueError, match="collect_dir can only be set"):
        SumMetric(collect_device="gpu", collect_dir="/tmp/x")
    assert SumMetric(collect_dir="/tmp/x").collect_dir == "/tmp/x"


def test_dataset_meta_property():
    metric = SumMetric()
    assert metric.dataset_meta is None
    metric.dataset_meta = {"classes": ("cat",)}
    assert metric.dataset_meta == {"classes": ("cat",)}
