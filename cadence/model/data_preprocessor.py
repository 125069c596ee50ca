"""Data preprocessors: move a batch to the model's device, and normalise images.

A preprocessor knows its device because ``.to()``, ``.cuda()`` and ``.cpu()``
record it (and :class:`~cadence.model.BaseModel` forwards those calls), so a
batch follows the model without any per-iteration device queries.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from operator import attrgetter
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from ..registry import MODELS
from .utils import stack_batch

_PLAIN_TENSOR = frozenset((torch.Tensor,))
_IS_CPU = attrgetter("is_cpu")


def _target_device(*args: Any, **kwargs: Any) -> torch.device | None:
    """The device a ``Module.to(*args, **kwargs)`` call moves to, or None."""
    device = torch._C._nn._parse_to(*args, **kwargs)[0]
    return None if device is None else torch.device(device)


def _cuda_device(device: int | str | torch.device | None) -> torch.device:
    if device is None:
        return torch.device("cuda", torch.cuda.current_device())
    if isinstance(device, int):
        return torch.device("cuda", device)
    return torch.device(device)


@MODELS.register_module()
class BaseDataPreprocessor(nn.Module):
    """Moves every tensor of a batch to this module's device, keeping the batch's structure.

    Args:
        non_blocking: copy host tensors asynchronously (useful with pinned memory).
    """

    _host: bool  # whether batches go to the host (set with the device)

    def __init__(self, non_blocking: bool = False) -> None:
        super().__init__()
        self._non_blocking = bool(non_blocking)
        self._device = torch.device("cpu")

    @property
    def device(self) -> torch.device:
        """Where batches are moved to."""
        return self._device

    def cast_data(self, data: Any) -> Any:
        """Return ``data`` with tensors (and objects with ``.to``) moved to :attr:`device`.

        Dicts, lists, tuples and named tuples are rebuilt with the same type;
        strings, bytes, None and other objects are returned as they are.
        """
        if type(data) is dict:  # the common batch: a plain dict, often of tensors
            values = data.values()
            if (
                self._host
                and _PLAIN_TENSOR.issuperset(map(type, values))
                and all(map(_IS_CPU, values))
            ):  # host tensors only, checked without a Python frame: the same new dict
                return dict(data)
            moved = {}
            host = self._host
            for key, value in data.items():  # a plain loop: no call per item for host tensors
                if not (host and type(value) is torch.Tensor and value.is_cpu):
                    value = self.cast_data(value)
                moved[key] = value
            return moved
        if isinstance(data, torch.Tensor):
            if type(data) is torch.Tensor and self._host and data.is_cpu:
                return data
            return data.to(self._device, non_blocking=self._non_blocking)
        if isinstance(data, Mapping):
            moved = {key: self.cast_data(value) for key, value in data.items()}
            return _rebuild_mapping(data, moved)
        if isinstance(data, (str, bytes)) or data is None:
            return data
        if isinstance(data, tuple) and hasattr(data, "_fields"):  # named tuple
            return type(data)(*(self.cast_data(item) for item in data))
        if isinstance(data, Sequence):
            return type(data)(self.cast_data(item) for item in data)  # type: ignore[call-arg]
        to = getattr(data, "to", None)
        if callable(to) and not isinstance(data, type):
            if self._non_blocking:
                return to(self._device, non_blocking=True)
            return to(self._device)
        return data

    @property
    def _device(self) -> torch.device:
        return self.__dict__["_target"]

    @_device.setter
    def _device(self, device: torch.device) -> None:
        self.__dict__["_target"] = device
        self.__dict__["_host"] = device.type == "cpu"

    def forward(self, data: Any, training: bool = False) -> Any:
        """Move ``data`` to :attr:`device`; subclasses add batch transforms."""
        return self.cast_data(data)

    def to(self, *args: Any, **kwargs: Any) -> BaseDataPreprocessor:
        """``nn.Module.to`` that also records the target device."""
        device = _target_device(*args, **kwargs)
        if device is not None:
            self._device = device
        return super().to(*args, **kwargs)

    def cuda(self, device: int | str | torch.device | None = None) -> BaseDataPreprocessor:
        """``nn.Module.cuda`` that also records the device."""
        self._device = _cuda_device(device)
        return super().cuda(self._device)

    def cpu(self) -> BaseDataPreprocessor:
        """``nn.Module.cpu`` that also records the device."""
        self._device = torch.device("cpu")
        return super().cpu()


def _rebuild_mapping(original: Mapping[Any, Any], moved: dict[Any, Any]) -> Any:
    try:
        return type(original)(moved)  # type: ignore[call-arg]
    except Exception:  # noqa: BLE001 - a mapping type that cannot be built from a dict
        return moved


class PreprocessorArgumentError(ValueError, AssertionError):
    """An argument or input ``ImgDataPreprocessor`` rejects where mmengine's ``assert``
    does (a ``ValueError``, and an ``AssertionError`` for code written against mmengine)."""


@MODELS.register_module()
class ImgDataPreprocessor(BaseDataPreprocessor):
    """Moves, channel-flips, normalises and pads images into one ``(N, C, H, W)`` batch.

    ``data`` is ``dict(inputs=..., data_samples=...)`` where ``inputs`` is an
    ``(N, C, H, W)`` tensor or a list of ``(C, H, W)`` tensors. The order of
    steps follows mmengine: flip channels, convert to float, normalise, then
    pad right/bottom with ``pad_value`` to a multiple of ``pad_size_divisor``.

    Args:
        mean: per-channel mean (1 or 3 values), or None for no normalisation.
        std: per-channel std, given exactly when ``mean`` is.
        pad_size_divisor: padded height and width are multiples of it.
        pad_value: value of padded pixels (after normalisation).
        bgr_to_rgb: reverse the channel order of 3-channel inputs.
        rgb_to_bgr: same operation; at most one of the two may be set.
        non_blocking: copy host tensors asynchronously.
    """

    mean: torch.Tensor
    std: torch.Tensor

    def __init__(
        self,
        mean: Sequence[float] | None = None,
        std: Sequence[float] | None = None,
        pad_size_divisor: int = 1,
        pad_value: float = 0,
        bgr_to_rgb: bool = False,
        rgb_to_bgr: bool = False,
        non_blocking: bool = False,
    ) -> None:
        super().__init__(non_blocking)
        if bgr_to_rgb and rgb_to_bgr:
            raise PreprocessorArgumentError(
                "set at most one of bgr_to_rgb and rgb_to_bgr (`bgr2rgb` and `rgb2bgr` "
                "cannot be set to True at the same time)"
            )
        if (mean is None) != (std is None):
            raise PreprocessorArgumentError(
                "give both mean and std, or neither (mean and std should be both None or tuple)"
            )
        if not isinstance(pad_size_divisor, int) or pad_size_divisor < 1:
            raise ValueError(f"pad_size_divisor must be a positive int, got {pad_size_divisor!r}")
        self._enable_normalize = mean is not None
        if mean is not None and std is not None:
            for label, values in (("mean", mean), ("std", std)):
                if len(values) not in (1, 3):
                    raise PreprocessorArgumentError(
                        f"`{label}` should have 1 value (gray) or 3 (RGB), got {len(values)}"
                    )
            self.register_buffer(
                "mean", torch.tensor(mean, dtype=torch.float32).view(-1, 1, 1), False
            )
            self.register_buffer(
                "std", torch.tensor(std, dtype=torch.float32).view(-1, 1, 1), False
            )
        self._channel_conversion = bgr_to_rgb or rgb_to_bgr
        self.pad_size_divisor = pad_size_divisor
        self.pad_value = pad_value

    def _check_channels(self, channels: int, shape: tuple[int, ...]) -> None:
        if self._channel_conversion and channels != 3:
            raise ValueError(f"bgr_to_rgb/rgb_to_bgr need 3-channel images, got shape {shape}")
        if self._enable_normalize and self.mean.shape[0] == 3 and channels != 3:
            raise PreprocessorArgumentError(
                "If the mean has 3 values, the input tensor should in shape of (3, H, W): "
                f"mean/std have 3 values, so images must have 3 channels; got shape {shape}"
            )

    def _transform(self, images: torch.Tensor, channel_dim: int) -> torch.Tensor:
        if self._channel_conversion:
            images = images.flip(channel_dim)
        images = images.float()
        if self._enable_normalize:
            images = (images - self.mean) / self.std
        return images

    def forward(self, data: Any, training: bool = False) -> dict[str, Any]:
        """Return ``dict(inputs=batch, data_samples=...)`` with the images processed."""
        if not isinstance(data, Mapping) or "inputs" not in data:
            got = (
                f"a dict with keys {sorted(data)}"
                if isinstance(data, Mapping)
                else type(data).__name__
            )
            raise TypeError(
                f"ImgDataPreprocessor expects dict(inputs=..., data_samples=...), got {got}"
            )
        data = dict(self.cast_data(data))
        inputs = data["inputs"]
        if isinstance(inputs, torch.Tensor):
            if inputs.dim() != 4:
                raise ValueError(
                    f"inputs must be an (N, C, H, W) tensor or a list of (C, H, W) tensors, got "
                    f"a tensor of shape {tuple(inputs.shape)}"
                )
            self._check_channels(inputs.shape[1], tuple(inputs.shape))
            batch = self._transform(inputs, channel_dim=1)
            height, width = batch.shape[2:]
            divisor = self.pad_size_divisor
            pad_h = math.ceil(height / divisor) * divisor - height
            pad_w = math.ceil(width / divisor) * divisor - width
            if pad_h or pad_w:
                batch = F.pad(batch, (0, pad_w, 0, pad_h), "constant", self.pad_value)
        elif (
            isinstance(inputs, (list, tuple))
            and inputs
            and all(isinstance(image, torch.Tensor) for image in inputs)
        ):
            images = []
            for image in inputs:
                if image.dim() != 3:
                    if self._enable_normalize and self.mean.shape[0] == 3:
                        self._check_channels(-1, tuple(image.shape))
                    raise ValueError(
                        f"each image in the inputs list must be (C, H, W), got shape "
                        f"{tuple(image.shape)}"
                    )
                self._check_channels(image.shape[0], tuple(image.shape))
                images.append(self._transform(image, channel_dim=0))
            batch = stack_batch(images, self.pad_size_divisor, self.pad_value)
        else:
            raise TypeError(
                "inputs must be an (N, C, H, W) tensor or a non-empty list of (C, H, W) tensors, "
                f"got {type(inputs).__name__}"
            )
        data["inputs"] = batch
        data.setdefault("data_samples", None)
        return data
