"""Train the digits model with a custom loop and a custom hook.

Run ``python examples/custom_hook_and_loop/train.py [CONFIG]`` from anywhere.

Options: ``--work-dir DIR`` and ``--cfg-options key=value ...``. Prints the epoch
the custom loop stopped at, the test metrics and where the confusion matrix is.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # custom_imports: examples.*

from examples.common import runner_from_command_line  # noqa: E402


def main() -> None:
    runner = runner_from_command_line(
        __doc__, os.path.join(HERE, "configs", "cnn_digits_custom.py")
    )
    runner.train()
    loop = runner.train_loop
    print(f"loop: {type(loop).__name__} trained {loop.epoch} of {loop.max_epochs} epochs")
    metrics = runner.test()
    print("test metrics:", {k: round(float(v), 2) for k, v in metrics.items()})
    print("confusion matrix:", os.path.join(runner.work_dir, "confusion_matrix.csv"))


if __name__ == "__main__":
    main()
