"""Validation and test loops."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import torch
from torch.utils.data import DataLoader

from ..registry import LOOPS
from .base_loop import BaseLoop

if TYPE_CHECKING:
    from ..runner.protocol import RunnerProtocol


class _EvalLoop(BaseLoop):
    """Run the model in eval mode over a dataloader and evaluate its predictions."""

    mode = "val"

    def __init__(
        self,
        runner: RunnerProtocol,
        dataloader: DataLoader | Mapping[str, Any],
        evaluator: Any,
        fp16: bool = False,
    ) -> None:
        super().__init__(runner, dataloader)
        from ..evaluator import build_evaluator

        self.evaluator = build_evaluator(evaluator)
        dataset = getattr(self.dataloader, "dataset", None)
        meta = getattr(dataset, "metainfo", None)
        if meta is not None:
            self.evaluator.dataset_meta = meta
        self.fp16 = fp16

    def _autocast(self) -> Any:
        if not self.fp16:
            return nullcontext()
        device = next(self._runner.model.parameters()).device.type
        dtype = torch.float16 if device == "cuda" else torch.bfloat16
        return torch.autocast(device_type=device, dtype=dtype)

    def run(self) -> dict[str, Any]:
        """Predict on every batch, evaluate, and return the metrics."""
        with self._heartbeat.loop(self.mode):  # inside training: back to its position after
            return self._run()

    def _run(self) -> dict[str, Any]:
        runner, mode = self._runner, self.mode
        runner.call_hook(f"before_{mode}")
        runner.call_hook(f"before_{mode}_epoch")
        runner.model.eval()
        model = runner.model
        step = getattr(model, f"{mode}_step")
        before, after = f"before_{mode}_iter", f"after_{mode}_iter"
        hooks = runner.stage_calls  # called here rather than through call_hook: per batch
        stage, fn = before, None
        beat = self._heartbeat
        try:
            with torch.no_grad():
                for batch_idx, data_batch in enumerate(self.dataloader):
                    beat.steps += 1  # for the hang watchdog: +1 now, +1 when done
                    stage = before
                    for fn in hooks[before]:
                        fn(runner, batch_idx, data_batch)
                    fn = None
                    with self._autocast():
                        outputs = step(data_batch)
                    self.evaluator.process(data_samples=outputs, data_batch=data_batch)
                    stage = after
                    for fn in hooks[after]:
                        fn(runner, batch_idx, data_batch, outputs)
                    fn = None
                    beat.steps += 1
        except Exception as exc:
            if fn is not None:
                runner.blame_hook(exc, stage, fn)
            raise
        with beat.busy("computing the metrics"):  # every rank; may be long on rank 0
            metrics = self.evaluator.evaluate(len(self.dataloader.dataset))  # type: ignore[arg-type]
        runner.call_hook(f"after_{mode}_epoch", metrics=metrics)
        runner.call_hook(f"after_{mode}")
        return metrics


@LOOPS.register_module()
class ValLoop(_EvalLoop):
    """Validation: ``model.val_step`` on each batch, then the evaluator's metrics."""

    mode = "val"


@LOOPS.register_module()
class TestLoop(_EvalLoop):
    """Testing: ``model.test_step`` on each batch, then the evaluator's metrics."""

    mode = "test"
