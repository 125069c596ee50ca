"""Accuracy against hand-computed values and a plain-Python reference."""

from __future__ import annotations

import math
import random

import pytest
import torch

from cadence.evaluator import Accuracy, Evaluator
from cadence.registry import METRICS


def evaluate(metric: Accuracy, samples: list, batch: int = 2) -> dict:
    for start in range(0, len(samples), batch):
        metric.process(None, samples[start : start + batch])
    return metric.evaluate(len(samples))


SCORES = [
    # gt 0: ranked 0 first            -> top1 hit
    ([0.6, 0.3, 0.1], 0),
    # gt 2: ranked second (0.35)       -> top2 hit only
    ([0.5, 0.15, 0.35], 2),
    # gt 1: ranked last                -> miss
    ([0.7, 0.1, 0.2], 1),
    # gt 1: ranked first               -> top1 hit
    ([0.2, 0.5, 0.3], 1),
]


def test_top1_and_top2_in_percent():
    samples = [{"pred_score": torch.tensor(s), "gt_label": g} for s, g in SCORES]
    result = evaluate(Accuracy(topk=(1, 2)), samples)
    assert result == pytest.approx({"accuracy/top1": 50.0, "accuracy/top2": 75.0})
    assert METRICS.get("Accuracy") is Accuracy


def test_threshold_drops_low_scoring_hits_and_names_each_threshold():
    samples = [{"pred_score": torch.tensor(s), "gt_label": g} for s, g in SCORES]
    result = evaluate(Accuracy(topk=(1, 2), thrs=(None, 0.4)), samples)
    # with thr 0.4 the top-2 hit at 0.35 no longer counts; the top-1 hits score 0.6 and 0.5
    assert result == pytest.approx(
        {
            "accuracy/top1_no-thr": 50.0,
            "accuracy/top1_thr-0.40": 50.0,
            "accuracy/top2_no-thr": 75.0,
            "accuracy/top2_thr-0.40": 50.0,
        }
    )
    high = evaluate(Accuracy(thrs=0.55), [{"pred_score": torch.tensor(s), "gt_label": g}
                                          for s, g in SCORES])  # fmt: skip
    assert high == pytest.approx({"accuracy/top1": 25.0})


def test_label_forms_and_attribute_samples():
    class Sample:
        def __init__(self, score, gt):
            self.pred_score, self.gt_label = score, gt

    samples = [
        {"pred_score": torch.tensor(SCORES[0][0]), "gt_label": torch.tensor(0)},
        {"pred_score": torch.tensor(SCORES[1][0]), "gt_label": torch.tensor([2])},
        Sample(torch.tensor(SCORES[2][0]), 1),
        Sample(torch.tensor(SCORES[3][0]), torch.tensor([1])),
    ]
    assert evaluate(Accuracy(), samples) == pytest.approx({"accuracy/top1": 50.0})


def test_pred_label_only_gives_top1():
    samples = [
        {"pred_label": 1, "gt_label": 1},
        {"pred_label": torch.tensor([0]), "gt_label": 2},
        {"pred_label": torch.tensor(2), "gt_label": torch.tensor([2])},
    ]
    result = evaluate(Accuracy(topk=(1, 5)), samples)
    assert result == pytest.approx({"accuracy/top1": 200.0 / 3})


@pytest.mark.parametrize("seed", range(3))
def test_matches_a_plain_python_reference(seed):
    rng = random.Random(seed)
    num_classes, topk = 6, (1, 3, 5)
    rows = [[rng.random() for _ in range(num_classes)] for _ in range(40)]
    gts = [rng.randrange(num_classes) for _ in rows]
    expected = {}
    for k in topk:
        hits = 0
        for row, gt in zip(rows, gts):
            ranked = sorted(range(num_classes), key=lambda c, row=row: -row[c])
            hits += gt in ranked[:k]
        expected[f"accuracy/top{k}"] = 100.0 * hits / len(rows)
    samples = [{"pred_score": torch.tensor(r), "gt_label": g} for r, g in zip(rows, gts)]
    evaluator = Evaluator(dict(type="Accuracy", topk=topk))
    for start in range(0, 40, 7):
        evaluator.process(samples[start : start + 7])
    assert evaluator.evaluate(40) == pytest.approx(expected)


def test_each_stored_row_owns_its_storage():
    metric = Accuracy()
    metric.process(None, [{"pred_score": torch.rand(10), "gt_label": 1} for _ in range(4)])
    row = metric.results[0]["pred_score"]
    assert row.untyped_storage().nbytes() == 10 * 4  # one row, not the whole batch
    assert metric.results[0]["gt_label"] == 1


def test_errors_and_empty_results():
    with pytest.raises(ValueError, match="topk must be a positive int"):
        Accuracy(topk=(0,))
    with pytest.raises(TypeError, match="thresholds must be numbers or None"):
        Accuracy(thrs="high")
    with pytest.raises(KeyError, match="needs 'gt_label'"):
        Accuracy().process(None, [{"pred_label": 1}])
    with pytest.raises(KeyError, match="needs 'pred_score' or 'pred_label'"):
        Accuracy().process(None, [{"gt_label": 1}])
    with pytest.raises(ValueError, match="one integer class index per sample"):
        Accuracy().process(None, [{"pred_label": 1, "gt_label": torch.tensor([1, 0])}])
    metric = Accuracy(topk=5)
    metric.process(None, [{"pred_score": torch.rand(3), "gt_label": 0}])
    with pytest.raises(ValueError, match="top-5 accuracy needs at least 5 classes"):
        metric.evaluate(1)
    mixed = Accuracy()
    mixed.process(None, [{"pred_score": torch.rand(3), "gt_label": 0}])
    mixed.process(None, [{"pred_label": 1, "gt_label": 0}])
    with pytest.raises(ValueError, match="some samples have 'pred_score'"):
        mixed.evaluate(2)
    empty = Accuracy().evaluate(0)  # logs that the results are empty
    assert list(empty) == ["accuracy/top1"] and math.isnan(empty["accuracy/top1"])
