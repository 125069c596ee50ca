"""``DumpResults``: predictions pickled in dataset order, by rank 0 only."""

from __future__ import annotations

import os
import pickle

import pytest
import torch

from cadence.dataset import DefaultSampler
from cadence.dist.testing import run_distributed
from cadence.evaluator import DumpResults, Evaluator
from cadence.registry import METRICS


def sample(index: int) -> dict:
    return {"id": index, "pred": torch.full((2,), float(index)), "label": index % 3}


def test_round_trip(tmp_path):
    out = tmp_path / "sub" / "preds.pkl"
    metric = DumpResults(out_file_path=str(out))
    samples = [sample(i) for i in range(5)]
    metric.process(None, samples[:3])
    metric.process(None, samples[3:])
    assert metric.evaluate(5) == {}
    with open(out, "rb") as f:
        loaded = pickle.load(f)
    assert [s["id"] for s in loaded] == list(range(5))
    assert all(torch.equal(a["pred"], b["pred"]) for a, b in zip(loaded, samples))
    assert [s["label"] for s in loaded] == [i % 3 for i in range(5)]
    assert metric.results == []
    assert [p.name for p in out.parent.iterdir()] == ["preds.pkl"]  # no temporary file left


def test_built_by_name_through_an_evaluator(tmp_path):
    out = tmp_path / "p.pickle"
    evaluator = Evaluator([dict(type="DumpResults", out_file_path=str(out))])
    assert isinstance(evaluator.metrics[0], DumpResults)
    assert METRICS.get("DumpResults") is DumpResults
    evaluator.process([sample(0), sample(1)])
    assert evaluator.evaluate(2) == {}
    with open(out, "rb") as f:
        assert [s["id"] for s in pickle.load(f)] == [0, 1]


def test_rejects_a_file_that_is_not_a_pickle(tmp_path):
    with pytest.raises(ValueError, match=r"\.pkl or \.pickle"):
        DumpResults(out_file_path=str(tmp_path / "preds.json"))


def _dump_on_two_ranks(out_dir: str, n: int) -> bool:
    rank = torch.distributed.get_rank()
    sampler = DefaultSampler(list(range(n)), shuffle=False)
    metric = DumpResults(out_file_path=os.path.join(out_dir, "preds.pkl"))
    metric.process(None, [sample(i) for i in sampler])
    metric.evaluate(n)
    torch.distributed.barrier()
    return rank == 0 and os.path.exists(os.path.join(out_dir, "preds.pkl"))


@pytest.mark.dist
def test_two_ranks_write_one_file_in_dataset_order(tmp_path):
    n = 7  # odd: the sampler pads one rank, the padding must not be dumped
    written = run_distributed(_dump_on_two_ranks, str(tmp_path), n, world_size=2)
    assert written == [True, False]
    with open(tmp_path / "preds.pkl", "rb") as f:
        assert [s["id"] for s in pickle.load(f)] == list(range(n))
