"""BaseModel: the model contract the loops train, validate and test through."""

from __future__ import annotations

import contextlib
from abc import abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any

import torch
from torch import nn

from ..registry import MODELS
from .base_module import BaseModule
from .data_preprocessor import BaseDataPreprocessor, _cuda_device, _target_device


def parse_losses(
    losses: dict[str, Any],
) -> tuple[torch.Tensor, OrderedDict[str, torch.Tensor]]:
    """Reduce a loss dict to ``(total, log_vars)``.

    Each entry becomes its mean (a list of tensors: the sum of their means).
    ``total`` sums the entries whose key contains ``'loss'``. ``log_vars`` holds
    detached tensors, ``'loss'`` (the total) first, then each entry; nothing
    is copied to the host here.
    """
    if type(losses) is dict and len(losses) == 1:  # fast path: just ``{'loss': scalar}``
        value = losses.get("loss")
        if type(value) is _TENSOR and value.ndim == 0:
            return value, OrderedDict(loss=value.detach())
    if not isinstance(losses, dict):
        raise TypeError(
            f"the forward pass in 'loss' mode must return a dict of losses, got "
            f"{type(losses).__name__}"
        )
    reduced: list[tuple[str, torch.Tensor]] = []
    for name, value in losses.items():
        if isinstance(value, torch.Tensor):
            reduced.append((name, value if value.dim() == 0 else value.mean()))
        elif (
            isinstance(value, (list, tuple))
            and value
            and all(isinstance(item, torch.Tensor) for item in value)
        ):
            terms = [item if item.dim() == 0 else item.mean() for item in value]
            total_term = terms[0]
            for term in terms[1:]:
                total_term = total_term + term
            reduced.append((name, total_term))
        else:
            raise TypeError(
                f"loss '{name}' must be a tensor or a non-empty list of tensors, got "
                f"{type(value).__name__}"
            )
    loss_terms = [value for name, value in reduced if "loss" in name]
    if not loss_terms:
        raise ValueError(
            f"no entry of the loss dict has 'loss' in its name (got keys {list(losses)}); "
            "the total loss is the sum of those entries"
        )
    total = loss_terms[0]
    for term in loss_terms[1:]:
        total = total + term
    log_vars: OrderedDict[str, torch.Tensor] = OrderedDict(loss=total.detach())
    for name, value in reduced:
        if name != "loss":
            log_vars[name] = value.detach()
    return total, log_vars


_NO_CONTEXT = contextlib.nullcontext()  # reusable
_NULL_CONTEXT = contextlib.nullcontext
_TENSOR = torch.Tensor


def forward_by_mode(forward: Callable[..., Any], data: Any, mode: str) -> Any:
    """``forward(**data, mode=mode)`` for a mapping, ``forward(*data, mode=mode)`` for a
    list or tuple (what a data preprocessor returns)."""
    if type(data) is dict:  # the common case first: no ABC check
        return forward(**data, mode=mode)
    if isinstance(data, (list, tuple)):
        return forward(*data, mode=mode)
    if isinstance(data, Mapping):
        return forward(**data, mode=mode)
    raise TypeError(
        "the data preprocessor must return a dict (passed as keyword arguments) or a "
        f"list/tuple (passed positionally) to forward, got {type(data).__name__}"
    )


def run_train_step(
    model: Any,
    data: Any,
    optim_wrapper: Any,
    forward: Callable[..., Any],
    optim_context: bool = True,
) -> OrderedDict[str, torch.Tensor]:
    """The one training step body: preprocess, forward in ``'loss'`` mode, parse, update.

    ``model`` (a :class:`BaseModel`) gives ``data_preprocessor`` and
    ``parse_losses``; ``forward`` runs the forward pass (the model itself, or
    a wrapper such as DDP or a DeepSpeed engine that must see it). With
    ``optim_context`` the preprocessing and forward pass run inside
    ``optim_wrapper.optim_context(forward)`` (autocast, ``no_sync`` while
    accumulating). Returns the detached log variables.
    """
    # from ``_modules``: ``model.data_preprocessor`` would go through nn.Module.__getattr__,
    # after a failed lookup that builds an exception
    preprocess = model._modules.get("data_preprocessor")
    if preprocess is None:  # not a submodule (a plain attribute or property)
        preprocess = model.data_preprocessor
    context = optim_wrapper.optim_context(forward) if optim_context else _NO_CONTEXT
    if type(context) is _NULL_CONTEXT:  # a no-op (the usual step): no with-block
        data = preprocess(data, True)
        if type(data) is dict:  # the common case inline: one call less per step
            losses = forward(**data, mode="loss")
        else:
            losses = forward_by_mode(forward, data, "loss")
    else:
        with context:
            data = preprocess(data, True)
            losses = forward_by_mode(forward, data, "loss")
    loss, log_vars = model.parse_losses(losses)
    optim_wrapper.update_params(loss)
    return log_vars


class BaseModel(BaseModule):
    """Base class of trainable models: preprocess, forward by mode, parse losses, update.

    Subclasses implement ``forward(inputs, data_samples=None, mode='tensor')``
    returning a loss dict (``'loss'``), a list of predictions (``'predict'``)
    or raw tensors (``'tensor'``).

    Args:
        data_preprocessor: a module, or a config built from ``MODELS``
            (default ``dict(type='BaseDataPreprocessor')``).
        init_cfg: weight initialisation config, see :class:`BaseModule`.
    """

    def __init__(
        self,
        data_preprocessor: dict[str, Any] | nn.Module | None = None,
        init_cfg: dict[str, Any] | list[dict[str, Any]] | None = None,
    ) -> None:
        super().__init__(init_cfg)
        self.data_preprocessor = build_data_preprocessor(data_preprocessor)

    def train_step(self, data: Any, optim_wrapper: Any) -> OrderedDict[str, torch.Tensor]:
        """Preprocess, compute losses, update parameters; return detached log variables.

        ``optim_wrapper`` provides ``optim_context(model)`` (a context manager,
        e.g. autocast or no-sync) and ``update_params(loss)``.
        """
        return run_train_step(self, data, optim_wrapper, self)

    def val_step(self, data: Any) -> list[Any]:
        """Preprocess ``data`` and return the predictions (the loop disables grad)."""
        preprocess: Any = self._modules["data_preprocessor"]
        return self._run_forward(preprocess(data, False), mode="predict")

    def test_step(self, data: Any) -> list[Any]:
        """Same as :meth:`val_step`."""
        preprocess: Any = self._modules["data_preprocessor"]
        return self._run_forward(preprocess(data, False), mode="predict")

    #: Reduce the loss dict to ``(total loss, log_vars)`` (:func:`parse_losses`); override
    #: ``parse_losses(self, losses)`` to change it.
    parse_losses = staticmethod(parse_losses)

    def _run_forward(self, data: Any, mode: str) -> Any:
        """Call ``self(**data, mode=mode)`` for a dict, ``self(*data, mode=mode)`` for a list."""
        return forward_by_mode(self, data, mode)

    @abstractmethod
    def forward(
        self, inputs: torch.Tensor, data_samples: list[Any] | None = None, mode: str = "tensor"
    ) -> Any:
        """Return a loss dict (mode 'loss'), predictions ('predict') or tensors ('tensor')."""

    # Device moves also tell the data preprocessors where batches must go.
    def to(self, *args: Any, **kwargs: Any) -> BaseModel:
        """``nn.Module.to`` that also moves the data preprocessors' target device."""
        device = _target_device(*args, **kwargs)
        if device is not None:
            _set_preprocessor_device(self, device)
        return super().to(*args, **kwargs)

    def cuda(self, device: int | str | torch.device | None = None) -> BaseModel:
        """``nn.Module.cuda`` that also moves the data preprocessors' target device."""
        target = _cuda_device(device)
        _set_preprocessor_device(self, target)
        return super().cuda(target)

    def cpu(self) -> BaseModel:
        """``nn.Module.cpu`` that also moves the data preprocessors' target device."""
        _set_preprocessor_device(self, torch.device("cpu"))
        return super().cpu()


def build_data_preprocessor(cfg: dict[str, Any] | nn.Module | None) -> nn.Module:
    """A preprocessor module from a module, a ``MODELS`` config, or None (the default one)."""
    if cfg is None:
        return BaseDataPreprocessor()
    if isinstance(cfg, nn.Module):
        return cfg
    if isinstance(cfg, dict):
        default = {"type": "BaseDataPreprocessor"}
        return MODELS.build(cfg, default_args=default)
    raise TypeError(
        f"data_preprocessor should be a dict config, an nn.Module or None, got {type(cfg).__name__}"
    )


def _set_preprocessor_device(model: nn.Module, device: torch.device) -> None:
    for module in model.modules():
        if isinstance(module, BaseDataPreprocessor):
            module._device = device
