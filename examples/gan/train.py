"""Train the 2-D GAN example: ``python examples/gan/train.py [CONFIG]``.

Options: ``--work-dir DIR`` and ``--cfg-options key=value ...`` (e.g.
``train_cfg.max_iters=200``). Prints the final mode coverage of the generator.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # custom_imports: examples.gan

from cadence.config import Config, DictAction  # noqa: E402
from cadence.runner import Runner  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("config", nargs="?", default=os.path.join(HERE, "configs", "ringgan_2d.py"))
    parser.add_argument("--work-dir")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, default={})
    args = parser.parse_args()

    cfg = Config.fromfile(args.config)
    cfg.merge_from_dict(args.cfg_options)
    if args.work_dir:
        cfg.work_dir = args.work_dir
    runner = Runner.from_cfg(cfg)
    runner.train()
    metrics = runner.val()
    print("optimizers:", sorted(runner.optim_wrapper.keys()))
    print("val metrics:", {k: round(float(v), 3) for k, v in metrics.items()})


if __name__ == "__main__":
    main()
