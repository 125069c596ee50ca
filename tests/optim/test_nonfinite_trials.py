"""Non-finite trials (issue #27) with two gloo ranks and real runners: rank 1's loss is NaN
at one iteration under ``skip_nonfinite=True``. On both ranks the parameters, the optimizer
state (Adam's moments and step counts) and the loss scaler's state after the skipped
step are byte-identical to those before it; the learning-rate schedule goes on as after
any iteration (the documented rule: a skipped step is an iteration like another); and
every later state and loss equals, bit for bit, a run that skipped the same step by
construction (nonfinite_cases explains that run).

AMP: DDP runs float16 autocast on CPU with a dynamic GradScaler (its scale and growth
tracker are compared); FSDP runs the plain wrapper (CPU AMP with bfloat16 has no scaler).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from cadence.dist.testing import run_distributed

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nonfinite_cases as cases  # noqa: E402

pytestmark = [pytest.mark.dist, pytest.mark.slow]


def same(a: Any, b: Any, where: str = "") -> list[str]:
    """Where ``a`` and ``b`` differ (tensors come as dtype, shape and bytes)."""
    if isinstance(a, dict):
        if not isinstance(b, dict) or a.keys() != b.keys():
            return [f"{where} (keys)"]
        return [d for k in a for d in same(a[k], b[k], f"{where}.{k}")]
    if isinstance(a, (list, tuple)):
        if not isinstance(b, (list, tuple)) or len(a) != len(b):
            return [f"{where} (length)"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in same(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {a!r} != {b!r}"]


@pytest.mark.parametrize(("strategy", "wrapper"), [("ddp", "amp_fp16"), ("fsdp", "plain")])
def test_a_nan_on_one_rank_leaves_every_state_as_before_and_the_run_as_if_skipped(
    tmp_path, strategy, wrapper
):
    ranks = run_distributed(cases.both, strategy, wrapper, str(tmp_path), world_size=2,
                            timeout=300)  # fmt: skip
    bad = cases.BAD
    for rank, runs in enumerate(ranks):
        poisoned, built = runs["poisoned"], runs["by_construction"]
        assert poisoned["skipped"] == 1 and built["skipped"] == 0, rank
        before, after = poisoned["states"][bad - 1], poisoned["states"][bad]
        assert before["params"] != {}  # something to compare
        for part in ("params", "optimizer", "scaler"):
            assert not same(after[part], before[part], part), (rank, part)
        if wrapper == "amp_fp16":  # the scaler's state moved on the other steps
            assert poisoned["states"][-1]["scaler"]["scale"] != 256.0
        # the schedule: the skipped step is an iteration like another
        assert after["lr"] != before["lr"]
        # the rest of the run: bit for bit the run that skipped that step by construction
        for i in range(bad, cases.ITERS):
            assert not same(poisoned["states"][i], built["states"][i]), (rank, i)
        assert poisoned["losses"][bad + 1 :] == built["losses"][bad + 1 :], rank
        assert poisoned["losses"][:bad] == built["losses"][:bad], rank
        nan = poisoned["losses"][bad] != poisoned["losses"][bad]
        assert nan == (rank == 1)  # each rank logs its own loss
    if strategy == "ddp":  # the ranks' replicas stay equal
        assert not same(ranks[0]["poisoned"]["states"][-1]["params"],
                        ranks[1]["poisoned"]["states"][-1]["params"])  # fmt: skip
