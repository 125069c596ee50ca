"""Resume a cadence checkpoint of ``tests/mmengine_toy.py``'s epoch run in REAL mmengine.

Run in the venv of ``make_venv.sh`` (see ``record.py``)::

    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1 /tmp/mmengine-0.10.7/bin/python \\
        benchmarks/mmengine_reference/resume_in_mmengine.py WORK_DIR/epoch_1.pth

It resumes and trains to the end, once from that file and once from mmengine's own
``tests/checkpoint/data/mmengine/epoch_1.pth`` of the same run, prints the warnings
mmengine raised or logged for each and the message-hub history it restored, and exits 1
if the cadence checkpoint caused a warning mmengine's own does not, or its history is
missing.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import warnings
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))

import mmengine_toy  # noqa: E402


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record.getMessage())


class _FirstIter(mmengine_toy.Hook):
    """Copies the ``train/loss`` history when the first resumed iteration starts."""

    priority = "VERY_LOW"

    def __init__(self, out: list) -> None:
        self.out = out

    def before_train_iter(self, runner, batch_idx, data_batch=None) -> None:
        if not self.out:
            import copy

            self.out.append(copy.deepcopy(runner.message_hub.log_scalars.get("train/loss")))


def resume(path: str) -> tuple[Any, list[str]]:
    """Resume ``path`` and train on; the restored ``train/loss`` buffer and the warnings."""
    from mmengine.config import Config
    from mmengine.logging import MMLogger
    from mmengine.runner import Runner

    assert mmengine_toy.ENGINE == "mmengine", "run this in the mmengine venv (make_venv.sh)"
    collect = _Collect()
    with tempfile.TemporaryDirectory() as work_dir, warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cfg = mmengine_toy.config("epoch", work_dir, 0)
        cfg.update(resume=True, load_from=path)
        runner = Runner.from_cfg(Config(cfg))
        MMLogger.get_current_instance().addHandler(collect)
        resumed = []
        runner.register_hook(_FirstIter(resumed))
        runner.train()  # resumes, then trains epochs 2 and 3
    loss = resumed[0] if resumed else None
    # torch's own note on TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD (every mmengine 0.10.7 load
    # on torch >= 2.6 needs the switch, its own checkpoints too) is not mmengine's
    seen = [w for w in seen if "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD" not in str(w.message)]
    print(f"{path}: finished at epoch {runner.train_loop.epoch}, iter {runner.train_loop.iter}")
    return loss, [str(w.message) for w in seen] + collect.records


def main(path: str) -> int:
    from mmengine.logging import HistoryBuffer

    own = os.path.join(ROOT, "tests", "checkpoint", "data", "mmengine", "epoch_1.pth")
    _, expected = resume(own)
    loss, problems = resume(path)
    history = loss._log_history.tolist() if isinstance(loss, HistoryBuffer) else None
    extra = sorted(set(problems) - set(expected))
    print("train/loss history restored:", history)
    print("warnings mmengine gives for its own checkpoint:", sorted(set(expected)) or "none")
    print("warnings only for this one:", extra or "none")
    return 0 if history and not extra else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
