"""Metrics on a real two-process gloo group: padding dropped, order restored, result broadcast."""

from __future__ import annotations

import pytest
import torch

from cadence.dataset import DefaultSampler
from cadence.dist.testing import run_distributed
from cadence.evaluator import Accuracy, BaseMetric, Evaluator

pytestmark = pytest.mark.dist

N = 7
CORRECT = {0, 2, 3, 5}  # 4 of 7 samples are predicted right


def sample(index: int) -> dict:
    """Sample ``index`` of class ``index % 3``; right for CORRECT, else the truth ranks
    second for sample 1 and last for the others."""
    gt = index % 3
    if index in CORRECT:
        order = [gt, (gt + 1) % 3, (gt + 2) % 3]
    elif index == 1:
        order = [(gt + 1) % 3, gt, (gt + 2) % 3]
    else:
        order = [(gt + 1) % 3, (gt + 2) % 3, gt]
    score = torch.zeros(3)
    score[order] = torch.tensor([0.7, 0.2, 0.1])
    return {"pred_score": score, "gt_label": gt}


class Ids(BaseMetric):
    """Returns the sample ids in the order evaluate() delivered them; counts computations."""

    default_prefix = "ids"

    def __init__(self) -> None:
        super().__init__()
        self.computed = 0

    def process(self, data_batch, data_samples) -> None:
        self.results.extend(s["id"] for s in data_samples)

    def compute_metrics(self, results: list) -> dict:
        self.computed += 1
        return {"order": list(results)}


class Fails(Ids):
    def compute_metrics(self, results: list) -> dict:
        raise ArithmeticError("cannot average nothing")


def run_epoch(evaluator: Evaluator, sampler: DefaultSampler, make, batch: int = 3) -> dict:
    indices = list(sampler)
    for start in range(0, len(indices), batch):
        evaluator.process([make(i) for i in indices[start : start + batch]])
    return evaluator.evaluate(N)


def _evaluate_on_each_rank() -> dict:
    out: dict = {}
    accuracy = Evaluator(Accuracy(topk=(1, 2)))
    out["accuracy"] = run_epoch(accuracy, DefaultSampler(range(N), seed=3), sample)
    ids = Ids()
    out["padded"] = run_epoch(Evaluator(ids), DefaultSampler(range(N), shuffle=False), _id)
    out["uneven"] = run_epoch(
        Evaluator(ids), DefaultSampler(range(N), shuffle=False, round_up=False), _id
    )
    out["computed"] = ids.computed
    try:
        run_epoch(Evaluator(Fails()), DefaultSampler(range(N), shuffle=False), _id)
    except Exception as exc:  # every rank must raise, none may hang
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def _id(index: int) -> dict:
    return {"id": index}


def test_metrics_over_two_ranks_equal_the_single_process_values():
    out = run_distributed(_evaluate_on_each_rank, world_size=2, timeout=30)
    # top-1: 4 of 7 right; top-2: sample 1 too. Counting rank 1's padding duplicate (a
    # second copy of the first shuffled sample) would give x/8 instead.
    expected = {"accuracy/top1": 400.0 / 7, "accuracy/top2": 500.0 / 7}
    single = Evaluator(Accuracy(topk=(1, 2)))
    single.process([sample(i) for i in range(N)])
    assert single.evaluate(N) == pytest.approx(expected)
    for rank in (0, 1):
        assert out[rank]["accuracy"] == pytest.approx(expected)
        assert out[rank]["padded"] == {"ids/order": list(range(N))}
        assert out[rank]["uneven"] == {"ids/order": list(range(N))}
    assert [out[0]["computed"], out[1]["computed"]] == [2, 0]  # only rank 0 computes
    assert out[0]["error"] == "ArithmeticError: cannot average nothing"
    assert out[1]["error"] == (
        "RuntimeError: Fails.compute_metrics failed on rank 0: "
        "ArithmeticError: cannot average nothing"
    )
