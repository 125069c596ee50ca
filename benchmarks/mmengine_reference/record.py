"""Record reference numbers and checkpoints with the REAL mmengine 0.10.7 (never cadence).

Run in the venv of ``make_venv.sh``, from the repository root::

    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 /tmp/mmengine-0.10.7/bin/python \\
        benchmarks/mmengine_reference/record.py

(mmengine 0.10.7 calls ``torch.load`` without ``weights_only``; torch >= 2.6 then loads
weights-only and refuses mmengine's own checkpoints, hence the switch.) MKL's code path is
fixed with ``MKL_CBWR=COMPATIBLE`` (set here unless given), so the floats are those of any
x86 CPU, not only of this one; the test runs cadence the same way. It trains the
runs of ``tests/mmengine_toy.py`` and writes:

* ``tests/runner/data/mmengine_losses.json``: every loss term of the first 20
  iterations, epoch- and iteration-based, ``num_workers`` 0 and 2, as ``float.hex``;
* ``tests/checkpoint/data/mmengine/``: ``epoch_1.pth`` and ``iter_10.pth`` of those runs
  (``num_workers=0``) and the globals their pickles name.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
os.environ.setdefault("MKL_CBWR", "COMPATIBLE")  # read once, when MKL starts: before torch

import mmengine  # noqa: E402
import mmengine_toy  # noqa: E402
import torch  # noqa: E402

assert mmengine_toy.ENGINE == "mmengine", "run this in the mmengine venv (make_venv.sh)"
LOSSES = os.path.join(ROOT, "tests", "runner", "data", "mmengine_losses.json")
CHECKPOINTS = os.path.join(ROOT, "tests", "checkpoint", "data", "mmengine")


def pickle_globals(path: str) -> list[str]:
    """The ``module.name`` of every global a torch checkpoint's pickle names."""
    import pickletools

    with zipfile.ZipFile(path) as archive:
        name = next(n for n in archive.namelist() if n.endswith("data.pkl"))
        data = archive.read(name)
    found, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if "UNICODE" in op.name:
            strings.append(arg)
        elif op.name == "GLOBAL":
            found.add(arg.replace(" ", "."))
        elif op.name == "STACK_GLOBAL":
            found.add(f"{strings[-2]}.{strings[-1]}")
    return sorted(found)


def main() -> None:
    runs: dict[str, dict] = {}
    os.makedirs(CHECKPOINTS, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("epoch", "iter"):
            for workers in (0, 2):
                work_dir = os.path.join(tmp, f"{kind}_{workers}")
                recorded = mmengine_toy.run(kind, work_dir, workers)[:20]
                runs[f"{kind}/num_workers={workers}"] = {
                    "iterations": [i for i, _ in recorded],
                    "losses": [{k: v.hex() for k, v in terms.items()} for _, terms in recorded],
                }
                if workers == 0:
                    name = "epoch_1.pth" if kind == "epoch" else "iter_10.pth"
                    shutil.copy(os.path.join(work_dir, name), os.path.join(CHECKPOINTS, name))
    listing = {name: pickle_globals(os.path.join(CHECKPOINTS, name))
               for name in sorted(os.listdir(CHECKPOINTS)) if name.endswith(".pth")}  # fmt: skip
    with open(os.path.join(CHECKPOINTS, "globals.json"), "w") as f:
        json.dump(listing, f, indent=1)
    record = {
        "recorded_with": {"mmengine": mmengine.__version__, "torch": torch.__version__,
                          "numpy": __import__("numpy").__version__,
                          "script": "benchmarks/mmengine_reference/record.py"},
        "runs": runs,
    }  # fmt: skip
    os.makedirs(os.path.dirname(LOSSES), exist_ok=True)
    with open(LOSSES, "w") as f:
        json.dump(record, f, indent=1)
    print(f"wrote {LOSSES} and {CHECKPOINTS}")


if __name__ == "__main__":
    main()
