"""Train the multigrid example: ``python examples/multigrid/train.py [CONFIG]``.

Options after the config are ``--work-dir DIR`` and ``--cfg-options key=value ...``.
The multigrid schedule table is logged when training starts; the test metrics
are printed at the end.
"""

from __future__ import annotations

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # custom_imports: examples.multigrid

from cadence.config import Config, DictAction  # noqa: E402
from cadence.runner import Runner  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "config", nargs="?", default=os.path.join(HERE, "configs", "tinyvideo_multigrid.py")
    )
    parser.add_argument("--work-dir")
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, default={})
    args = parser.parse_args()

    cfg = Config.fromfile(args.config)
    cfg.merge_from_dict(args.cfg_options)
    if args.work_dir:
        cfg.work_dir = args.work_dir
    runner = Runner.from_cfg(cfg)
    runner.train()
    metrics = runner.test()
    print("test metrics:", {k: round(float(v), 2) for k, v in metrics.items()})


if __name__ == "__main__":
    main()
