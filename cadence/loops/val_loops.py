"""Validation and test loops."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

import torch
from torch.utils.data import DataLoader

from ..model.base_model import parse_losses
from ..registry import LOOPS
from ..registry.constraints import FLAG, constrain
from ..resilience.heartbeat import DATA, EVALUATOR, FORWARD, HOOK
from .base_loop import BaseLoop
from .eval_sets import prefixed, split_eval_sets
from .val_loss import LossMeter, batch_size, loss_and_predict

if TYPE_CHECKING:
    from ..contracts import RunnerProtocol


@constrain(fp16=FLAG, compute_loss=FLAG)
class _EvalLoop(BaseLoop):
    """Run the model in eval mode over one or several sets and evaluate its predictions.

    Args:
        dataloader: one dataloader (config or built), or several as a list or a dict by
            name; each set's metrics are prefixed with its name (:mod:`.eval_sets`).
        evaluator: the evaluator, or one per set (a list or a dict by name).
        fp16: run the model under autocast.
        compute_loss: also record the model's loss on each set, as the metric ``loss``
            (and one per loss entry; :mod:`.val_loss` says how it is computed).
    """

    mode = "val"

    def __init__(
        self,
        runner: RunnerProtocol,
        dataloader: DataLoader | Mapping[str, Any] | Sequence[Any],
        evaluator: Any,
        fp16: bool = False,
        compute_loss: bool = False,
    ) -> None:
        sets = split_eval_sets(dataloader, evaluator, self.mode)
        super().__init__(runner, sets[0][1])
        #: each set's dataloader by name (``None``: the single unnamed set)
        self.dataloaders: dict[str | None, Any] = {sets[0][0]: self.dataloader}
        for name, loader, _ in sets[1:]:
            self.dataloaders[name] = self.build_dataloader(loader)
        #: each set's evaluator by name
        self.evaluators: dict[str | None, Any] = {
            name: self._evaluator_for(self.dataloaders[name], cfg) for name, _, cfg in sets
        }
        self.evaluator = self.evaluators[sets[0][0]]
        #: the name of the set being evaluated (``dataloader`` is its loader meanwhile)
        self.current_set: str | None = None
        self.fp16 = fp16
        if not isinstance(compute_loss, bool):
            raise ValueError(f"{self.mode}_cfg.compute_loss must be True or False, "
                             f"got {compute_loss!r}")  # fmt: skip
        self.compute_loss = compute_loss

    @staticmethod
    def _evaluator_for(dataloader: Any, cfg: Any) -> Any:
        from ..evaluator import build_evaluator

        evaluator = build_evaluator(cfg)
        meta = getattr(getattr(dataloader, "dataset", None), "metainfo", None)
        if meta is not None:
            evaluator.dataset_meta = meta
        return evaluator

    def _autocast(self) -> Any:
        if not self.fp16:
            return nullcontext()
        device = next(self._runner.model.parameters()).device.type
        dtype = torch.float16 if device == "cuda" else torch.bfloat16
        return torch.autocast(device_type=device, dtype=dtype)

    def run(self) -> dict[str, Any]:
        """Predict on every batch of every set, evaluate, and return the metrics."""
        with self._heartbeat.loop(self.mode):  # inside training: back to its position after
            return self._run()

    def _run(self) -> dict[str, Any]:
        runner, mode = self._runner, self.mode
        runner.call_hook(f"before_{mode}")
        runner.call_hook(f"before_{mode}_epoch")
        runner.model.eval()
        metrics: dict[str, Any] = {}
        first = self.dataloader
        try:
            for name, loader in self.dataloaders.items():
                self.dataloader, self.current_set = loader, name
                metrics.update(prefixed(name, self._run_set(loader, self.evaluators[name])))
        finally:
            self.dataloader, self.current_set = first, None
        runner.call_hook(f"after_{mode}_epoch", metrics=metrics)
        runner.call_hook(f"after_{mode}")
        return metrics

    def _stepper(self) -> tuple[Callable[[Any], Any], LossMeter | None]:
        """What one batch runs: the model's ``{mode}_step``, or (with ``compute_loss``) the
        loss-and-predictions step, which feeds the returned meter."""
        runner = self._runner
        wrapped: Any = runner.model
        if not self.compute_loss:
            return (wrapped.test_step if self.mode == "test" else wrapped.val_step), None
        model = runner.strategy.unwrap(wrapped)
        parse = getattr(model, "parse_losses", parse_losses)
        meter = LossMeter()

        def step(data_batch: Any) -> Any:
            losses, outputs = loss_and_predict(model, data_batch)
            meter.add(losses, batch_size(outputs, data_batch), parse)
            return outputs

        return step, meter

    def _run_set(self, dataloader: Any, evaluator: Any) -> dict[str, Any]:
        runner, mode = self._runner, self.mode
        step, meter = self._stepper()
        before, after = f"before_{mode}_iter", f"after_{mode}_iter"
        hooks = runner.stage_calls  # called here rather than through call_hook: per batch
        stage, fn = before, None
        beat = self._heartbeat
        try:
            with torch.no_grad():
                for batch_idx, data_batch in enumerate(dataloader):
                    beat.steps += 1  # for the hang watchdog: +1 now, +1 when done
                    stage = before
                    beat.phase, beat.stage = HOOK, stage  # and where in the batch
                    for fn in hooks[before]:
                        beat.hook = fn
                        fn(runner, batch_idx, data_batch)
                    fn = None
                    beat.phase = FORWARD
                    with self._autocast():
                        outputs = step(data_batch)
                    beat.phase = EVALUATOR
                    evaluator.process(data_samples=outputs, data_batch=data_batch)
                    stage = after
                    beat.phase, beat.stage = HOOK, stage
                    for fn in hooks[after]:
                        beat.hook = fn
                        fn(runner, batch_idx, data_batch, outputs)
                    fn = None
                    beat.steps += 1
                    beat.phase = DATA
        except Exception as exc:
            if fn is not None:
                runner.blame_hook(exc, stage, fn)
            raise
        beat.phase = EVALUATOR  # past the last batch
        with beat.busy("computing the metrics"):  # every rank; may be long on rank 0
            metrics = evaluator.evaluate(len(dataloader.dataset))
            losses = meter.result() if meter is not None else {}
        clashes = sorted(set(metrics) & set(losses))
        if clashes:
            raise ValueError(
                f"{mode}_cfg.compute_loss: the evaluator already produces {', '.join(clashes)}; "
                "rename the metric (e.g. with its prefix) or set compute_loss=False"
            )
        return {**metrics, **losses}


@LOOPS.register_module()
class ValLoop(_EvalLoop):
    """Validation: ``model.val_step`` on each batch, then the evaluator's metrics."""

    mode = "val"


@LOOPS.register_module()
class TestLoop(_EvalLoop):
    """Testing: ``model.test_step`` on each batch, then the evaluator's metrics."""

    mode = "test"
