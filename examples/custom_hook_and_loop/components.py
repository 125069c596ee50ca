"""A custom hook and a custom training loop, registered by name for configs to use.

* ``ConfusionMatrixHook`` counts (true, predicted) label pairs while testing and,
  when the test epoch ends, writes ``confusion_matrix.csv`` to the work dir and
  logs the most confused pairs.
* ``TargetLossTrainLoop`` is the epoch loop that also stops once an epoch's mean
  training loss is below ``target_loss``.

``custom_imports`` in ``configs/cnn_digits_custom.py`` imports this module, so
the names resolve when the config is built; nothing else has to change.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import torch

from cadence.hooks import Hook
from cadence.loops import EpochBasedTrainLoop
from cadence.registry import HOOKS, LOOPS


@HOOKS.register_module()
class ConfusionMatrixHook(Hook):
    """Write the test set's confusion matrix (rows: true class, columns: predicted).

    Args:
        num_classes: number of classes.
        filename: file name inside the work dir.
        top: how many of the most confused pairs to log.
    """

    priority = "LOW"  # after the built-in hooks at the same stage

    def __init__(self, num_classes: int, filename: str = "confusion_matrix.csv", top: int = 3):
        self.num_classes = num_classes
        self.filename = filename
        self.top = top
        self.matrix = torch.zeros(num_classes, num_classes, dtype=torch.long)

    def before_test_epoch(self, runner: Any) -> None:
        self.matrix.zero_()

    def after_test_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        for sample in outputs or []:
            self.matrix[int(sample["gt_label"]), int(sample["pred_label"])] += 1

    def after_test_epoch(self, runner: Any, metrics: Mapping[str, Any] | None = None) -> None:
        if runner.rank != 0:
            return
        path = os.path.join(runner.work_dir, self.filename)
        with open(path, "w") as f:
            f.write("true\\pred," + ",".join(map(str, range(self.num_classes))) + "\n")
            for label, row in enumerate(self.matrix.tolist()):
                f.write(f"{label}," + ",".join(map(str, row)) + "\n")
        errors = self.matrix.clone()
        errors.fill_diagonal_(0)
        counts, flat = errors.flatten().topk(self.top)
        pairs = [
            f"{i // self.num_classes}->{i % self.num_classes} x{n}"
            for n, i in zip(counts.tolist(), flat.tolist())
            if n > 0
        ]
        runner.logger.info(f"confusion matrix: {path}; most confused: {pairs or 'none'}")


@LOOPS.register_module()
class TargetLossTrainLoop(EpochBasedTrainLoop):
    """``EpochBasedTrainLoop`` that stops early once an epoch's mean loss < ``target_loss``.

    The loss comes from the message hub (``train/loss``, which ``RuntimeInfoHook``
    records each iteration), so the loop needs no change to the model.
    """

    def __init__(self, runner: Any, dataloader: Any, max_epochs: int, target_loss: float,
                 **kwargs: Any) -> None:  # fmt: skip
        super().__init__(runner, dataloader, max_epochs=max_epochs, **kwargs)
        self.target_loss = target_loss
        self.stopped_at: int | None = None

    def run_epoch(self) -> None:
        super().run_epoch()
        history = self.runner.message_hub.get_scalar("train/loss")
        mean_loss = history.mean(len(self.dataloader))
        if mean_loss < self.target_loss:
            self.stop_training = True
            self.stopped_at = self.epoch
            self.runner.logger.info(
                f"epoch {self.epoch}: mean loss {mean_loss:.4f} < target {self.target_loss}; "
                "stopping"
            )
