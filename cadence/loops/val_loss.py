"""The model's loss on a validation (or test) set: ``val_cfg=dict(compute_loss=True)``.

Each batch gives the predictions the evaluator needs and the loss dict of a
``mode='loss'`` forward:

* a model with ``loss_and_predict(data) -> (losses, predictions)`` (``data`` as
  ``val_step`` gets it) is called once: it can compute both from one forward
  pass (e.g. logits -> loss and scores), which is the way to avoid a second one;
* any other model is preprocessed once and run twice, ``mode='loss'`` then
  ``mode='predict'``.

The losses are reduced like training's (``parse_losses``: ``loss`` is the total,
then each entry) and averaged over samples: each batch's values weigh as many
samples as it has predictions, and the sums and counts of every rank are added
up before dividing, so the result is the exact mean over every sample evaluated
(including the few a distributed sampler repeats to give every rank as many).
"""

from __future__ import annotations

from typing import Any

import torch

from ..model.base_model import forward_by_mode, parse_losses


def loss_and_predict(model: Any, data: Any) -> tuple[dict[str, Any], Any]:
    """``(losses, predictions)`` of one batch (module docstring); ``model`` is unwrapped."""
    both = getattr(model, "loss_and_predict", None)
    if callable(both):
        result = both(data)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise TypeError(
                f"{type(model).__name__}.loss_and_predict must return (losses, predictions), "
                f"got {type(result).__name__}"
            )
        return result[0], result[1]
    preprocess = getattr(model, "data_preprocessor", None)
    if not callable(preprocess):
        raise TypeError(
            f"compute_loss=True needs a model with a data_preprocessor (a BaseModel) or a "
            f"loss_and_predict(data) method; {type(model).__name__} has neither"
        )
    batch = preprocess(data, False)
    losses = forward_by_mode(model, batch, "loss")
    return losses, forward_by_mode(model, batch, "predict")


class LossMeter:
    """Sums of per-sample losses and the number of samples, reduced across ranks once."""

    def __init__(self) -> None:
        self._sums: dict[str, torch.Tensor] = {}
        self._count = 0

    def add(self, losses: dict[str, Any], count: int, parse: Any = parse_losses) -> None:
        """Add one batch's loss dict (each entry a batch mean) over ``count`` samples."""
        _, log_vars = parse(losses)
        for key, value in log_vars.items():
            value = torch.as_tensor(value).detach().float().mean()
            weighted = value.double() * count if value.device.type != "mps" else value * count
            total = self._sums.get(key)
            self._sums[key] = weighted if total is None else total + weighted
        self._count += count

    def result(self) -> dict[str, float]:
        """The mean of each loss over every rank's samples (one collective)."""
        from ..dist import all_gather_object

        local = {key: float(total) for key, total in self._sums.items()}
        sums: dict[str, float] = {}
        count = 0
        for part_sums, part_count in all_gather_object((local, self._count)):
            count += part_count
            for key, total in part_sums.items():
                sums[key] = sums.get(key, 0.0) + total
        if count == 0:
            return {}
        return {key: total / count for key, total in sums.items()}


def batch_size(predictions: Any, data: Any) -> int:
    """How many samples a batch holds: its predictions, else its ``inputs``."""
    try:
        return len(predictions)
    except TypeError:
        pass
    inputs = data.get("inputs") if isinstance(data, dict) else None
    try:
        return len(inputs) if inputs is not None else 1
    except TypeError:
        return 1
