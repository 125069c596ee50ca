"""Train the 2-D GAN example: ``python examples/gan/train.py [CONFIG]``.

Options: ``--work-dir DIR`` and ``--cfg-options key=value ...`` (e.g.
``train_cfg.max_iters=200``). Prints the final mode coverage of the generator.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # custom_imports: examples.gan

from examples.common import runner_from_command_line  # noqa: E402


def main() -> None:
    runner = runner_from_command_line(__doc__, os.path.join(HERE, "configs", "ringgan_2d.py"))
    runner.train()
    metrics = runner.val()
    print("optimizers:", sorted(runner.optim_wrapper.keys()))
    print("val metrics:", {k: round(float(v), 3) for k, v in metrics.items()})


if __name__ == "__main__":
    main()
