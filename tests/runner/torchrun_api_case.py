"""Run by torchrun in test_lifecycle.py: DDP through the Python API, no CLI.

``ok``: read ``runner.model``, train, test, then validate with one runner; an
exit handler registered before the runner's reports whether the process group
was released at exit. ``fail``: train, then rank 1 raises at the start of
``test()`` while rank 0 gathers the test results.
"""

from __future__ import annotations

import atexit
import os
import sys

import torch.distributed as torch_dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner_toys import Blobs, ToyClassifier  # noqa: E402

from cadence.config import Config  # noqa: E402
from cadence.hooks import Hook  # noqa: E402
from cadence.registry import DATASETS, MODELS  # noqa: E402
from cadence.runner import Runner  # noqa: E402


class FailOnRankOne(Hook):
    def before_test(self, runner) -> None:
        if runner.rank == 1:
            raise RuntimeError("rank one failed in test")


def loader(n: int, seed: int) -> dict:
    return dict(batch_size=8, dataset=dict(type="Blobs", n=n, seed=seed),
                sampler=dict(type="DefaultSampler", shuffle=False),
                collate_fn=dict(type="default_collate"))  # fmt: skip


def main(mode: str, work_dir: str) -> None:
    DATASETS.register_module(module=Blobs, force=True)
    MODELS.register_module(module=ToyClassifier, force=True)
    atexit.register(lambda: print(f"AT EXIT initialized={torch_dist.is_initialized()}", flush=True))
    cfg = dict(
        model=dict(type="ToyClassifier", hidden=8), work_dir=work_dir,
        train_dataloader=loader(64, 0), train_cfg=dict(max_epochs=1),
        optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.1)),
        val_dataloader=loader(32, 1), val_cfg=dict(), val_evaluator=dict(type="Accuracy"),
        test_dataloader=loader(32, 1), test_cfg=dict(), test_evaluator=dict(type="Accuracy"),
        default_hooks=dict(checkpoint=dict(type="CheckpointHook", interval=0)),
        launcher="pytorch", strategy=dict(type="DDPStrategy"),
        env_cfg=dict(dist_cfg=dict(timeout=300)),
    )  # fmt: skip
    runner = Runner.from_cfg(Config(cfg))
    if mode == "fail":
        runner.register_hook(FailOnRankOne())
    else:
        print(f"MODEL {type(runner.model).__name__}", flush=True)
    runner.train()
    tested = runner.test()
    validated = runner.val()
    print(f"METRICS rank={runner.rank} {tested == validated}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
