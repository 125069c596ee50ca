"""Same config, same seed, CPU: cadence's losses equal real mmengine 0.10.7's bit for bit.

The reference (``data/mmengine_losses.json``) was recorded by
``benchmarks/mmengine_reference/record.py`` in a venv with mmengine 0.10.7, running the
very file cadence runs here (``tests/mmengine_toy.py``); nothing in it comes from cadence.
It also holds the ``num_workers=2`` runs, which cadence does not match: its workers seed
each batch from the batch's place in the data order (:mod:`cadence.dataset.worker`),
mmengine's seed each worker once with ``seed + worker_id``.
"""

from __future__ import annotations

import json
import os

import mmengine_toy
import pytest

REFERENCE = os.path.join(os.path.dirname(__file__), "data", "mmengine_losses.json")


def reference(kind: str, workers: int) -> list[dict[str, float]]:
    with open(REFERENCE) as f:
        run = json.load(f)["runs"][f"{kind}/num_workers={workers}"]
    return [{k: float.fromhex(v) for k, v in terms.items()} for terms in run["losses"]]


@pytest.mark.parametrize("kind", ["epoch", "iter"])
def test_the_first_20_losses_equal_mmengines(tmp_path, kind):
    workers = 0  # with workers cadence seeds each batch from its place: see the docstring
    assert mmengine_toy.BaseModel.__module__.startswith("cadence.")  # (or the alias of it)
    recorded = mmengine_toy.run(kind, str(tmp_path), workers)[:20]
    assert [i for i, _ in recorded] == list(range(20))
    assert [terms for _, terms in recorded] == reference(kind, workers)
