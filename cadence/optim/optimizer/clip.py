"""Gradient clipping configured by ``clip_grad=dict(...)`` in an optimizer wrapper."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import Tensor

from ...utils import did_you_mean

# Accepted keys (besides 'type') and the required one, per clipping type.
_KEYS: dict[str, tuple[frozenset[str], str]] = {
    "norm": (frozenset({"max_norm", "norm_type", "error_if_nonfinite", "foreach"}), "max_norm"),
    "value": (frozenset({"clip_value", "foreach"}), "clip_value"),
}


class GradClipper:
    """Clip gradients by total norm (``type='norm'``, default) or by value.

    ``cfg`` holds the keyword arguments of ``torch.nn.utils.clip_grad_norm_``
    (``max_norm``, ``norm_type``, ``error_if_nonfinite``, ``foreach``) or of
    ``torch.nn.utils.clip_grad_value_`` (``clip_value``, ``foreach``) plus an
    optional ``type``. The caller's dict is not modified.
    """

    def __init__(self, cfg: Mapping[str, Any]) -> None:
        if not isinstance(cfg, Mapping):
            raise TypeError(
                "clip_grad must be None or a dict such as dict(max_norm=1.0) or "
                f"dict(type='value', clip_value=0.5), got {type(cfg).__name__}"
            )
        kwargs = dict(cfg)
        clip_type = kwargs.pop("type", "norm")
        if clip_type not in _KEYS:
            raise ValueError(
                f"clip_grad.type must be 'norm' or 'value', got {clip_type!r}."
                f"{did_you_mean(str(clip_type), _KEYS)}"
            )
        accepted, required = _KEYS[clip_type]
        for key in kwargs:
            if key not in accepted:
                raise ValueError(
                    f"clip_grad got unknown key {key!r} for type='{clip_type}'; accepted keys: "
                    f"{', '.join(sorted(accepted | {'type'}))}.{did_you_mean(key, accepted)}"
                )
        if required not in kwargs:
            raise ValueError(f"clip_grad with type='{clip_type}' needs '{required}'")
        self.type: str = clip_type
        self.kwargs: dict[str, Any] = kwargs
        self.by_norm = clip_type == "norm"

    def __call__(self, params: Sequence[Tensor]) -> Tensor | None:
        """Clip the gradients of ``params`` in place; return the total norm when by norm."""
        if self.by_norm:
            return torch.nn.utils.clip_grad_norm_(params, **self.kwargs)
        torch.nn.utils.clip_grad_value_(params, **self.kwargs)
        return None

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"GradClipper(type={self.type!r}, {args})"
