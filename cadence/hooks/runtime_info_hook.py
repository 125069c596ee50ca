"""Keep the message hub up to date with the run's position, learning rates and outputs."""

from __future__ import annotations

from typing import Any

import torch

from ..registry import HOOKS
from .hook import Hook


def _is_scalar(value: Any) -> bool:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True
    return isinstance(value, torch.Tensor) and value.numel() == 1


@HOOKS.register_module()
class RuntimeInfoHook(Hook):
    """Publish epoch/iter, max epochs/iters, learning rates, losses and metrics."""

    priority = "VERY_HIGH"

    def before_run(self, runner: Any) -> None:
        hub = runner.message_hub
        hub.update_info("seed", runner.seed)
        hub.update_info("experiment_name", runner.experiment_name)

    def before_train(self, runner: Any) -> None:
        runner.message_hub.update_info_dict(
            {
                "epoch": runner.epoch,
                "iter": runner.iter,
                "max_epochs": runner.max_epochs,
                "max_iters": runner.max_iters,
            }
        )

    def before_train_epoch(self, runner: Any) -> None:
        runner.message_hub.update_info("epoch", runner.epoch)

    def before_train_iter(self, runner: Any, batch_idx: int, data_batch: Any = None) -> None:
        hub = runner.message_hub
        hub.update_info("iter", runner.iter)
        for name, values in runner.optim_wrapper.get_lr().items():
            hub.update_scalar(f"train/{name}", values[0])

    def after_train_iter(
        self, runner: Any, batch_idx: int, data_batch: Any = None, outputs: Any = None
    ) -> None:
        if outputs:
            hub = runner.message_hub
            for key, value in outputs.items():
                hub.update_scalar(f"train/{key}", value)

    def after_val_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self._publish(runner, "val", metrics)

    def after_test_epoch(self, runner: Any, metrics: dict[str, Any] | None = None) -> None:
        self._publish(runner, "test", metrics)

    @staticmethod
    def _publish(runner: Any, mode: str, metrics: dict[str, Any] | None) -> None:
        hub = runner.message_hub
        for key, value in (metrics or {}).items():
            if _is_scalar(value):
                hub.update_scalar(f"{mode}/{key}", value)
            else:
                hub.update_info(f"{mode}/{key}", value)
