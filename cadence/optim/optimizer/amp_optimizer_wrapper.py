"""``AmpOptimWrapper``: mixed precision with autocast and gradient scaling."""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import torch
from torch import Tensor, nn

from ...registry import OPTIM_WRAPPERS
from ...resilience import heartbeat
from ...resilience.heartbeat import BACKWARD, OPTIMIZER
from ...utils import did_you_mean
from .optimizer_wrapper import OptimWrapper

_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def _first_param_device(params: Iterator[Tensor]) -> torch.device | None:
    for param in params:
        return param.device
    return None


def resolve_amp_device(device: str | torch.device | None, optimizer: Any) -> str:
    """Return the autocast device type: ``device``'s, else that of the optimizer's parameters."""
    if device is None:
        first = _first_param_device(p for g in optimizer.param_groups for p in g["params"])
        device_type = first.type if first is not None else "cpu"
    else:
        try:
            device_type = torch.device(device).type
        except (RuntimeError, TypeError) as exc:
            raise ValueError(f"AmpOptimWrapper got an invalid device {device!r}: {exc}") from None
    if device_type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            "AmpOptimWrapper was asked for device 'cuda' but CUDA is not available; "
            "use device='cpu' (bfloat16 autocast) or run on a machine with a GPU"
        )
    if not torch.amp.is_autocast_available(device_type):
        raise ValueError(f"autocast is not available for device type '{device_type}'")
    return device_type


def resolve_amp_dtype(dtype: str | torch.dtype | None, device_type: str) -> torch.dtype:
    """Return the autocast dtype; ``None`` means torch's default for ``device_type``."""
    if dtype is None:
        resolved = torch.get_autocast_dtype(device_type)
    elif isinstance(dtype, str):
        if dtype not in _DTYPES:
            raise ValueError(
                f"AmpOptimWrapper dtype must be one of {', '.join(map(repr, _DTYPES))} or None, "
                f"got {dtype!r}.{did_you_mean(dtype, _DTYPES)}"
            )
        resolved = _DTYPES[dtype]
    elif isinstance(dtype, torch.dtype) and dtype in _DTYPES.values():
        resolved = dtype
    else:
        raise TypeError(
            "AmpOptimWrapper dtype must be None, 'float16', 'bfloat16', torch.float16 or "
            f"torch.bfloat16, got {dtype!r}"
        )
    if device_type == "cuda" and resolved == torch.bfloat16 and not torch.cuda.is_bf16_supported():
        raise RuntimeError("this CUDA device does not support bfloat16; use dtype='float16'")
    return resolved


def _scaler_kwargs(scaler_cls: type, loss_scale: Mapping[str, Any]) -> dict[str, Any]:
    accepted = list(inspect.signature(scaler_cls).parameters)
    for key in loss_scale:
        if key not in accepted or key == "device":
            raise ValueError(
                f"loss_scale got unknown GradScaler argument {key!r}; accepted: "
                f"{', '.join(a for a in accepted if a != 'device')}.{did_you_mean(key, accepted)}"
            )
    return dict(loss_scale)


@OPTIM_WRAPPERS.register_module()
class AmpOptimWrapper(OptimWrapper):
    """An :class:`OptimWrapper` that trains in mixed precision.

    Args:
        loss_scale: ``'dynamic'`` (torch's default ``GradScaler``), a number
            (a static scale that never changes), or a dict of ``GradScaler``
            arguments (``init_scale``, ``growth_interval``, ...).
        dtype: the autocast dtype: ``None`` (float16 on CUDA, bfloat16 on
            CPU), ``'float16'``, ``'bfloat16'`` or the torch dtypes. Losses are
            scaled only for float16; bfloat16 needs no scaler.
        use_fsdp: use FSDP's ``ShardedGradScaler`` (with FullyShardedDataParallel).
        device: the device type for the scaler; by default that of the
            optimizer's parameters. ``'cuda'`` without CUDA is an error.
        **kwargs: the :class:`OptimWrapper` arguments (``optimizer``,
            ``accumulative_counts``, ``clip_grad``).

    A step whose unscaled gradients hold inf or NaN is skipped (the
    parameters stay as they were) and a dynamic scale is reduced.
    """

    def __init__(
        self,
        loss_scale: str | float | Mapping[str, Any] = "dynamic",
        dtype: str | torch.dtype | None = None,
        use_fsdp: bool = False,
        device: str | torch.device | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.device_type = resolve_amp_device(device, self.optimizer)
        self.cast_dtype = resolve_amp_dtype(dtype, self.device_type)
        self._scale_update_param: float | None = None
        scaler_cls: type = torch.amp.GradScaler
        if use_fsdp:
            from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

            scaler_cls = ShardedGradScaler
        scaler_args: dict[str, Any] = {"enabled": self.cast_dtype == torch.float16}
        if isinstance(loss_scale, str):
            if loss_scale != "dynamic":
                raise ValueError(
                    f"loss_scale must be 'dynamic', a number or a dict, got {loss_scale!r}"
                    f"{did_you_mean(loss_scale, ['dynamic'])}"
                )
        elif isinstance(loss_scale, (int, float)) and not isinstance(loss_scale, bool):
            if loss_scale <= 0:
                raise ValueError(f"a static loss_scale must be > 0, got {loss_scale}")
            self._scale_update_param = float(loss_scale)
            scaler_args["init_scale"] = float(loss_scale)
        elif isinstance(loss_scale, Mapping):
            scaler_args.update(_scaler_kwargs(scaler_cls, loss_scale))
        else:
            raise TypeError(
                f"loss_scale must be 'dynamic', a number or a dict, got {type(loss_scale).__name__}"
            )
        self.loss_scaler = scaler_cls(self.device_type, **scaler_args)

    def backward(self, loss: Tensor, **kwargs: Any) -> None:
        """Back-propagate the loss multiplied by the current loss scale."""
        heartbeat.current.phase = BACKWARD
        self.loss_scaler.scale(loss).backward(**kwargs)
        self._inner_count += 1

    def step(self, **kwargs: Any) -> None:
        """Unscale and clip the gradients, step unless they are not finite, update the scale."""
        heartbeat.current.phase = OPTIMIZER
        scaler = self.loss_scaler
        if self._clipper is not None:
            scaler.unscale_(self.optimizer)
            self._clip_grad()
        scaler.step(self.optimizer, **kwargs)
        scaler.update(self._scale_update_param)

    @contextmanager
    def optim_context(self, model: nn.Module) -> Iterator[None]:
        """The :class:`OptimWrapper` context plus ``torch.autocast`` on the model's device."""
        first = _first_param_device(model.parameters())
        device_type = first.type if first is not None else self.device_type
        with super().optim_context(model), torch.autocast(device_type, dtype=self.cast_dtype):
            yield

    def state_dict(self) -> dict[str, Any]:
        """The optimizer state plus the scaler's under ``'loss_scaler'``."""
        state = super().state_dict()
        state["loss_scaler"] = self.loss_scaler.state_dict()
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore the optimizer and, when saved, the scaler (argument not modified)."""
        if not isinstance(state_dict, dict):
            raise TypeError(f"state_dict must be a dict, got {type(state_dict).__name__}")
        state = dict(state_dict)
        scaler_state = state.pop("loss_scaler", None)
        if scaler_state:  # empty when saved by a disabled (bfloat16) scaler
            self.loss_scaler.load_state_dict(scaler_state)
        super().load_state_dict(state)

    def __repr__(self) -> str:
        return f"{super().__repr__()}\ndtype: {self.cast_dtype}\nloss_scaler: {self.loss_scaler!r}"
