"""Evaluator and build_evaluator."""

from __future__ import annotations

import pytest

from cadence.evaluator import Accuracy, BaseMetric, Evaluator, build_evaluator
from cadence.registry import EVALUATOR, METRICS, RegistryError


class Collect(BaseMetric):
    """Keeps every sample and the batches it was given."""

    default_prefix = "collect"

    def __init__(self, name: str = "ids", **kwargs) -> None:
        super().__init__(**kwargs)
        self.name = name
        self.batches: list = []

    def process(self, data_batch, data_samples) -> None:
        self.batches.append(data_batch)
        self.results.extend(data_samples)

    def compute_metrics(self, results: list) -> dict:
        return {self.name: [r["id"] for r in results]}


@pytest.fixture(autouse=True)
def _register():
    METRICS.register_module(module=Collect)


class DataElement:
    """Stands in for a data sample object with to_dict()."""

    def __init__(self, **fields) -> None:
        self.fields = fields

    def to_dict(self) -> dict:
        return dict(self.fields)


def test_one_metric_config_instance_or_list():
    assert isinstance(Evaluator(dict(type="Collect")).metrics[0], Collect)
    metric = Collect()
    assert Evaluator(metric).metrics == [metric]
    both = Evaluator([dict(type="Collect", prefix="a"), Collect(prefix="b")])
    assert [m.prefix for m in both.metrics] == ["a", "b"]


def test_bad_metrics_are_rejected():
    with pytest.raises(TypeError, match="metric 0 must be a METRICS config"):
        Evaluator(3)
    with pytest.raises(TypeError, match="got str"):
        Evaluator("Collect")
    with pytest.raises(RegistryError, match="Did you mean 'Collect'"):
        Evaluator(dict(type="Colect"))


def test_process_converts_data_elements_and_merges_results():
    evaluator = Evaluator([Collect(prefix="a"), Collect(prefix="b", name="other")])
    evaluator.process([DataElement(id=0), {"id": 1}], data_batch={"inputs": [0, 1]})
    evaluator.process([DataElement(id=2)])
    assert evaluator.metrics[0].batches == [{"inputs": [0, 1]}, None]
    assert evaluator.evaluate(3) == {"a/ids": [0, 1, 2], "b/other": [0, 1, 2]}


def test_duplicate_names_across_metrics_are_an_error():
    evaluator = Evaluator([Collect(), Collect()])
    evaluator.process([{"id": 0}])
    with pytest.raises(ValueError, match="'collect/ids' \\(Collect\\)"):
        evaluator.evaluate(1)


def test_dataset_meta_reaches_every_metric():
    evaluator = Evaluator([Collect(prefix="a"), Collect(prefix="b")])
    evaluator.dataset_meta = {"classes": ("x", "y")}
    assert evaluator.dataset_meta == {"classes": ("x", "y")}
    assert all(m.dataset_meta == {"classes": ("x", "y")} for m in evaluator.metrics)


def test_offline_evaluate_in_chunks_with_collated_data():
    evaluator = Evaluator(Collect())
    samples = [{"id": i} for i in range(5)]
    data = [{"img": i * 10} for i in range(5)]
    assert evaluator.offline_evaluate(samples, data, chunk_size=2) == {
        "collect/ids": [0, 1, 2, 3, 4]
    }
    assert evaluator.metrics[0].batches == [{"img": [0, 10]}, {"img": [20, 30]}, {"img": [40]}]
    assert evaluator.offline_evaluate(samples[:3]) == {"collect/ids": [0, 1, 2]}
    with pytest.raises(ValueError, match="same length, got 5 and 4") as caught:
        evaluator.offline_evaluate(samples, data[:4])
    assert isinstance(caught.value, AssertionError)  # mmengine checks it with assert
    with pytest.raises(ValueError, match="chunk_size must be a positive int"):
        evaluator.offline_evaluate(samples, chunk_size=0)


def test_build_evaluator_accepts_runner_config_forms():
    built = Evaluator(Collect())
    assert build_evaluator(built) is built
    from_metrics = build_evaluator(dict(metrics=dict(type="Collect")))
    assert type(from_metrics) is Evaluator and isinstance(from_metrics.metrics[0], Collect)
    assert isinstance(build_evaluator(dict(type="Accuracy", topk=(1, 2))).metrics[0], Accuracy)
    listed = build_evaluator([dict(type="Collect", prefix="a"), dict(type="Accuracy")])
    assert [type(m) for m in listed.metrics] == [Collect, Accuracy]
    metric = Collect()
    assert build_evaluator(metric).metrics == [metric]


def test_build_evaluator_with_a_custom_evaluator_type():
    @EVALUATOR.register_module()
    class LoudEvaluator(Evaluator):
        def __init__(self, metrics=(), volume: int = 1) -> None:
            super().__init__(list(metrics) or [Collect()])
            self.volume = volume

    built = build_evaluator(dict(type="LoudEvaluator", volume=3))
    assert type(built) is LoudEvaluator and built.volume == 3
    with_metrics = build_evaluator(dict(type="LoudEvaluator", metrics=[dict(type="Collect")]))
    assert type(with_metrics) is LoudEvaluator


def test_build_evaluator_rejects_other_types():
    with pytest.raises(TypeError, match="an evaluator config must be"):
        build_evaluator(42)
