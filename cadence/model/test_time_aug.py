"""``BaseTTAModel``: test-time augmentation, a model run once per augmented view.

A ``TestTimeAug`` transform turns each sample into a dict of lists (one entry per
view); collating a batch of them gives ``dict(inputs=[view0_batch, view1_batch, ...],
data_samples=[view0_samples, ...])``. :meth:`BaseTTAModel.test_step` splits such a
batch into one batch per view, runs the wrapped model's ``test_step`` on each, and
hands the predictions, grouped by sample, to :meth:`BaseTTAModel.merge_preds`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from ..registry import MODELS
from .base_model import BaseModel


def split_views(data: Any) -> list[Any]:
    """One batch per augmented view out of a TTA batch.

    ``dict(k=[v0, v1])`` gives ``[dict(k=v0), dict(k=v1)]``; a list or tuple
    ``[[a0, a1], [b0, b1]]`` gives ``[[a0, b0], [a1, b1]]``. Every value must
    hold the same number of views (``ValueError`` otherwise).
    """
    if isinstance(data, Mapping):
        fields = list(data.items())
    elif isinstance(data, (list, tuple)):
        fields = list(enumerate(data))
    else:
        raise TypeError(
            "a TTA batch must be a dict, list or tuple of per-view lists, "
            f"got {type(data).__name__}"
        )
    if not fields:
        raise ValueError("a TTA batch has no fields, so no views to run")
    counts = {str(key): _view_count(key, value) for key, value in fields}
    if len(set(counts.values())) > 1:
        raise ValueError(f"the fields of a TTA batch hold different numbers of views: {counts}")
    num_views = next(iter(counts.values()))
    if isinstance(data, Mapping):
        return [{key: value[i] for key, value in fields} for i in range(num_views)]
    return [[value[i] for _, value in fields] for i in range(num_views)]


def _into_module(model: nn.Module, state_dict: dict[str, Any], prefix: str, *args: Any) -> None:
    """Load-state-dict pre-hook: a key ``<prefix>x`` becomes ``<prefix>module.x``."""
    inner = f"{prefix}module."
    for key in [k for k in state_dict if k.startswith(prefix) and not k.startswith(inner)]:
        state_dict[inner + key[len(prefix) :]] = state_dict.pop(key)


def _view_count(key: Any, value: Any) -> int:
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise TypeError(
            f"TTA batch field {key!r} must be a list with one entry per view, got "
            f"{type(value).__name__} (is TestTimeAug in the test pipeline?)"
        )
    return len(value)


@MODELS.register_module()
class BaseTTAModel(BaseModel):
    """Run ``module`` on every augmented view of a batch and merge its predictions.

    Subclasses implement :meth:`merge_preds`. The wrapped model is built from its
    config (``MODELS``) unless a module is given; ``data_preprocessor`` becomes the
    wrapped model's when its config names none. A state dict of the plain model
    (keys without the ``module.`` prefix, as checkpoints are read) loads into
    ``module``, so the trained model's checkpoint fits, also when the runner has
    wrapped this model for distributed testing.

    Args:
        module: the model to test, or its config.
        data_preprocessor: default data preprocessor config for ``module``.
    """

    def __init__(
        self,
        module: dict[str, Any] | nn.Module,
        data_preprocessor: dict[str, Any] | nn.Module | None = None,
    ) -> None:
        super().__init__()
        if isinstance(module, nn.Module):
            self.module = module
        elif isinstance(module, Mapping):
            spec = dict(module)
            if data_preprocessor is not None:
                spec.setdefault("data_preprocessor", data_preprocessor)
            self.module = MODELS.build(spec)
        else:
            raise TypeError(
                f"module must be an nn.Module or a model config dict, got {type(module).__name__}"
            )
        if not callable(getattr(self.module, "test_step", None)):
            raise TypeError(
                f"the model wrapped by {type(self).__name__} ({type(self.module).__name__}) "
                "has no test_step"
            )
        self.register_load_state_dict_pre_hook(_into_module)

    @abstractmethod
    def merge_preds(self, data_samples_list: list[Sequence[Any]]) -> list[Any]:
        """One prediction per sample out of ``data_samples_list``, whose entry ``i``
        holds sample ``i``'s predictions, one per view, in the views' order."""

    def test_step(self, data: Any) -> list[Any]:
        """The wrapped model's ``test_step`` on each view, merged by :meth:`merge_preds`."""
        return self._run_views(data, "test_step")

    def val_step(self, data: Any) -> list[Any]:
        """As :meth:`test_step`, with the wrapped model's ``val_step``."""
        return self._run_views(data, "val_step")

    def _run_views(self, data: Any, step: str) -> list[Any]:
        run = getattr(self.module, step)
        per_view = [run(view) for view in split_views(data)]
        sizes = {len(predictions) for predictions in per_view}
        if len(sizes) > 1:
            raise ValueError(
                f"the views of one batch gave different numbers of predictions: "
                f"{[len(p) for p in per_view]}"
            )
        return self.merge_preds([list(sample) for sample in zip(*per_view)])

    def forward(
        self, inputs: torch.Tensor, data_samples: list[Any] | None = None, mode: str = "tensor"
    ) -> Any:
        """Not used: a TTA model is only tested (``test_step``/``val_step``)."""
        raise NotImplementedError(
            f"{type(self).__name__}.forward is not called; use test_step on a TTA batch"
        )
