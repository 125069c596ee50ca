"""Let a plain ``nn.Module`` train like a :class:`BaseModel`.

``as_cadence_model(module)`` turns the module *itself* into a BaseModel: its
class is swapped for a subclass of (its class, BaseModel), created once per
class. Nothing is wrapped, so parameter names and ``state_dict`` keys stay
exactly as they were, the module's own methods (``forward``, and a
``train_step`` if it has one) win over BaseModel's, and ``isinstance(m,
BaseModel)`` holds. The module's ``forward`` must accept ``mode=`` and return
a loss dict for ``mode='loss'``.
"""

from __future__ import annotations

import threading
from typing import Any

import torch
from torch import nn

from .base_model import BaseModel, build_data_preprocessor
from .data_preprocessor import BaseDataPreprocessor

_adapted_classes: dict[type, type] = {}
_lock = threading.Lock()


class _AdaptedModel(BaseModel):
    """Marker base of the classes :func:`as_cadence_model` creates; keeps them picklable."""

    def __reduce_ex__(self, protocol: Any) -> Any:
        plain_cls = type(self).__cadence_original_class__  # type: ignore[attr-defined]
        plain = plain_cls.__new__(plain_cls)
        plain.__dict__.update(self.__dict__)
        return _readapt, (plain,)


def _readapt(module: nn.Module) -> BaseModel:
    return as_cadence_model(module)


def _adapted_class(cls: type) -> type:
    with _lock:
        adapted = _adapted_classes.get(cls)
        if adapted is None:
            try:
                adapted = type(cls.__name__, (cls, _AdaptedModel), {})
            except TypeError as exc:
                raise TypeError(
                    f"cannot make {cls.__qualname__} a cadence model ({exc}); subclass "
                    "cadence.model.BaseModel instead"
                ) from exc
            adapted.__qualname__ = cls.__qualname__
            adapted.__module__ = cls.__module__
            adapted.__cadence_original_class__ = cls  # type: ignore[attr-defined]
            _adapted_classes[cls] = adapted
        return adapted


def _module_device(module: nn.Module) -> torch.device:
    for param in module.parameters():
        return param.device
    for buffer in module.buffers():
        return buffer.device
    return torch.device("cpu")


_WHAT_TO_WRITE = """\
cadence calls forward(inputs, data_samples, mode=...) and needs a loss dict for mode='loss'; \
{name}.forward{signature} takes no `mode`. Wrap the module in a BaseModel that computes \
the loss, and give that as model=, e.g.:

    from torch.nn import functional as F
    from cadence.model import BaseModel
    from cadence.registry import MODELS

    @MODELS.register_module()
    class {name}Trainer(BaseModel):
        def __init__(self, **kwargs):
            super().__init__()
            self.net = {name}(**kwargs)

        def forward(self, inputs, data_samples=None, mode="tensor"):
            out = self.net(inputs)
            if mode == "loss":
                return {{"loss": F.cross_entropy(out, data_samples)}}
            return out.argmax(1) if mode == "predict" else out

(see docs/contract.md, "A plain torch module")"""


def _check_forward_takes_mode(module: nn.Module) -> None:
    """Raise TypeError, saying what to write, when ``module`` cannot run in cadence's loops:
    its ``forward`` takes no ``mode`` and it brings no ``train_step``/``val_step`` of its own."""
    import inspect

    cls = type(module)
    if any(hasattr(cls, step) for step in ("train_step", "val_step", "test_step")):
        return
    try:
        signature = inspect.signature(module.forward)
    except (TypeError, ValueError):
        return
    params = signature.parameters.values()
    if "mode" in signature.parameters or any(p.kind is p.VAR_KEYWORD for p in params):
        return
    raise TypeError(_WHAT_TO_WRITE.format(name=cls.__name__, signature=signature))


def as_cadence_model(
    module: nn.Module, data_preprocessor: dict[str, Any] | nn.Module | None = None
) -> BaseModel:
    """Return ``module`` as a :class:`BaseModel` (the same object; BaseModels are returned as is).

    Args:
        module: the model; ``forward(..., mode='loss')`` returns a loss dict.
        data_preprocessor: used when the module has no ``data_preprocessor``
            module yet (default: :class:`BaseDataPreprocessor`).
    """
    if isinstance(module, BaseModel):
        return module
    if not isinstance(module, nn.Module):
        raise TypeError(f"as_cadence_model expects an nn.Module, got {type(module).__name__}")
    _check_forward_takes_mode(module)
    existing = getattr(module, "data_preprocessor", None)
    if existing is not None and not isinstance(existing, nn.Module):
        raise TypeError(
            f"{type(module).__name__}.data_preprocessor is a {type(existing).__name__}; "
            "it must be an nn.Module (or absent) to train the module with cadence"
        )
    preprocessor = existing if existing is not None else build_data_preprocessor(data_preprocessor)
    device = _module_device(module)
    module.__class__ = _adapted_class(type(module))
    module.__dict__.setdefault("_is_init", False)
    module.__dict__.setdefault("init_cfg", None)
    if existing is None:
        module.data_preprocessor = preprocessor
    for sub in preprocessor.modules():
        if isinstance(sub, BaseDataPreprocessor):
            sub._device = device
    preprocessor.to(device)
    return module  # type: ignore[return-value]
