"""Train the multigrid example: ``python examples/multigrid/train.py [CONFIG]``.

Options after the config are ``--work-dir DIR`` and ``--cfg-options key=value ...``.
The multigrid schedule table is logged when training starts; the test metrics
are printed at the end.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # custom_imports: examples.multigrid

from examples.common import runner_from_command_line  # noqa: E402


def main() -> None:
    runner = runner_from_command_line(
        __doc__, os.path.join(HERE, "configs", "tinyvideo_multigrid.py")
    )
    runner.train()
    metrics = runner.test()
    print("test metrics:", {k: round(float(v), 2) for k, v in metrics.items()})


if __name__ == "__main__":
    main()
