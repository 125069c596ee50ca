"""Train, validate and test the digits example: ``python examples/digits/train.py [CONFIG]``.

Options after the config are ``--work-dir DIR`` and ``--cfg-options key=value ...``
(e.g. ``train_cfg.max_epochs=5``). At the end it prints the test metrics and
where the log, the checkpoint and the training curves are (the curves image
needs matplotlib: ``pip install matplotlib``).
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(os.path.dirname(HERE)))  # custom_imports: examples.digits

from examples.common import runner_from_command_line  # noqa: E402

CURVE_KEYS = ("loss", "lr", "accuracy/top1")


def plot_curves(log_dir: str) -> str:
    """Draw the logged loss (training, and each validation set's), learning rate and
    accuracy (of each validation set) into ``log_dir/curves.png``;
    return the image's path, or why there is none."""
    from cadence.visualization.plot import plot_runs, set_keys
    from cadence.visualization.scalar_log import PlotError, load_runs

    out = os.path.join(log_dir, "curves.png")
    try:
        logged = load_runs([log_dir])[0].keys()
        keys = [k for k in CURVE_KEYS if k in logged or set_keys(k, logged)]
        plot_runs([log_dir], keys=keys or None, out=out)  # a line per validation set
    except PlotError as exc:
        return f"not drawn ({exc})"
    return out


def main() -> None:
    runner = runner_from_command_line(__doc__, os.path.join(HERE, "configs", "cnn_1xb32_digits.py"))
    runner.train()
    metrics = runner.test()
    if runner.rank != 0:
        return
    from cadence.checkpoint import find_latest_checkpoint

    best = runner.message_hub.get_info("best_ckpt")
    print("test metrics:", {k: round(float(v), 2) for k, v in metrics.items()})
    print("log:        ", os.path.join(runner.log_dir, f"{runner.timestamp}.log"))
    print("scalars:    ", os.path.join(runner.log_dir, "vis_data", "scalars.json"))
    print("checkpoint: ", find_latest_checkpoint(runner.work_dir))
    if best:
        print("best:       ", best)
    print("curves:     ", plot_curves(runner.log_dir))


if __name__ == "__main__":
    main()
