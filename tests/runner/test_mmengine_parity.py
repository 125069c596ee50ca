"""Same config, same seed, CPU: cadence's losses equal real mmengine 0.10.7's bit for bit.

The reference (``data/mmengine_losses.json``) was recorded by
``benchmarks/mmengine_reference/record.py`` in a venv with mmengine 0.10.7, running the
very file cadence runs here (``tests/mmengine_toy.py``); nothing in it comes from cadence.
It also holds the ``num_workers=2`` runs, which cadence does not match: its workers seed
each batch from the batch's place in the data order (:mod:`cadence.dataset.worker`),
mmengine's seed each worker once with ``seed + worker_id``.

Bit-identical floats need the same kernels: MKL picks its code path by CPU (on an
AVX-512 Xeon the losses of both engines drift from the AMD EPYC's that recorded the
file from iteration 3), unless ``MKL_CBWR=COMPATIBLE`` fixes the path it takes on every
x86 CPU (on the EPYC that is the path it took anyway). MKL reads it once, when it starts,
so the runs go to a fresh interpreter (not the fork server, whose MKL has started).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REFERENCE = HERE / "data" / "mmengine_losses.json"
KINDS = ("epoch", "iter")

_RUN_BOTH = """
import json, sys
import mmengine_toy
assert mmengine_toy.BaseModel.__module__.startswith("cadence.")  # (or the alias of it)
out = {}
for kind in sys.argv[2:]:
    recorded = mmengine_toy.run(kind, f"{sys.argv[1]}/{kind}", 0)[:20]
    out[kind] = [[i, {k: float(v).hex() for k, v in terms.items()}] for i, terms in recorded]
print("LOSSES", json.dumps(out))
"""


def reference(kind: str, workers: int) -> list[dict[str, float]]:
    with open(REFERENCE) as f:
        run = json.load(f)["runs"][f"{kind}/num_workers={workers}"]
    return [{k: float.fromhex(v) for k, v in terms.items()} for terms in run["losses"]]


@pytest.fixture(scope="module")
def cadence_losses(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list]:
    """Both runs in one fresh interpreter with MKL's code path fixed (see the docstring);
    with workers cadence seeds each batch from its place, so ``num_workers=0``."""
    work = tmp_path_factory.mktemp("parity")
    env = {**os.environ, "MKL_CBWR": "COMPATIBLE",
           "PYTHONPATH": os.pathsep.join([str(HERE.parent), str(HERE.parents[1])])}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", _RUN_BOTH, str(work), *KINDS], env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    line = next(line for line in done.stdout.splitlines() if line.startswith("LOSSES "))
    return dict(json.loads(line.removeprefix("LOSSES ")))


@pytest.mark.parametrize("kind", KINDS)
def test_the_first_20_losses_equal_mmengines(cadence_losses, kind):
    recorded = cadence_losses[kind]
    assert [i for i, _ in recorded] == list(range(20))
    terms = [{k: float.fromhex(v) for k, v in t.items()} for _, t in recorded]
    assert terms == reference(kind, 0)
