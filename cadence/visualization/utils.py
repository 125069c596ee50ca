"""Argument checks, colours and heatmaps of the drawing methods, under the names
``mmengine.visualization.utils`` gives them (task visualizers import them).

numpy and matplotlib are imported inside the functions that need them.
"""

from __future__ import annotations

import sys
from typing import Any

Color = str | tuple[int, int, int]


def tensor2ndarray(value: Any) -> Any:
    """``value`` as a numpy array when it is a torch tensor, else unchanged."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return value


def check_type(name: str, value: Any, valid_type: type | tuple[type, ...]) -> None:
    """``TypeError`` naming ``name`` unless ``value`` is a ``valid_type``."""
    if not isinstance(value, valid_type):
        raise TypeError(f"`{name}` should be {valid_type}  but got {type(value)}")


def check_length(name: str, value: Any, valid_length: int) -> None:
    """``AssertionError`` when ``value`` is a list of fewer than ``valid_length`` items."""
    if isinstance(value, list) and len(value) < valid_length:
        raise AssertionError(
            f"The length of {name} must equal with or greater than {valid_length}, "
            f"but got {len(value)}"
        )


def check_type_and_length(
    name: str, value: Any, valid_type: type | tuple[type, ...], valid_length: int
) -> None:
    """:func:`check_type` and :func:`check_length`."""
    check_type(name, value, valid_type)
    check_length(name, value, valid_length)


def value2list(value: Any, valid_type: type | tuple[type, ...], expand_dim: int) -> Any:
    """``[value] * expand_dim`` when ``value`` is one ``valid_type`` item, else ``value``."""
    return [value] * expand_dim if isinstance(value, valid_type) else value


def array_or_tensor() -> tuple[type, ...]:
    """The types drawing coordinates may have: numpy arrays and torch tensors."""
    import numpy as np

    torch = sys.modules.get("torch")
    return (np.ndarray,) if torch is None else (np.ndarray, torch.Tensor)


def color_val_matplotlib(colors: Any) -> Any:
    """Colours as matplotlib reads them: names and hex strings stay, RGB tuples in
    0..255 become 0..1 floats; lists are converted item by item."""
    if isinstance(colors, str):
        return colors
    if isinstance(colors, tuple):
        _check_rgb(colors)
        return tuple(channel / 255 for channel in colors)
    if isinstance(colors, list):
        return [color_val_matplotlib(color) for color in colors]
    raise TypeError(f"Invalid type for color: {type(colors)}")


def color_str2rgb(color: Color) -> tuple[int, int, int]:
    """``color`` (a matplotlib name/hex or an RGB tuple in 0..255) as an RGB tuple in 0..255."""
    if isinstance(color, str):
        from matplotlib.colors import to_rgb

        red, green, blue = (int(channel * 255) for channel in to_rgb(color))
        return red, green, blue
    _check_rgb(color)
    return color


def _check_rgb(color: tuple[Any, ...]) -> None:
    if len(color) != 3 or not all(0 <= channel <= 255 for channel in color):
        raise AssertionError(f"an RGB colour must be 3 values in [0, 255], got {color}")


def blend(image: Any, overlay: Any, alpha: float) -> Any:
    """``image * (1 - alpha) + overlay * alpha``, rounded and clipped to uint8."""
    import numpy as np

    mixed = image.astype(np.float64) * (1 - alpha) + overlay.astype(np.float64) * alpha
    return np.clip(np.rint(mixed), 0, 255).astype(np.uint8)


def convert_overlay_heatmap(feat_map: Any, img: Any = None, alpha: float = 0.5) -> Any:
    """A (H, W) or (1|3, H, W) feature map as an RGB jet heatmap (uint8), blended onto
    the RGB image ``img`` with weight ``alpha`` when one is given.

    Values are stretched min-max to 0..255 (a constant map is all 0); three channels
    are reduced to one with the BGR-to-gray weights first.
    """
    import numpy as np
    from matplotlib import colormaps

    values = tensor2ndarray(feat_map)
    if not (values.ndim == 2 or (values.ndim == 3 and values.shape[0] in (1, 3))):
        raise AssertionError(
            f"a feature map must be (H, W), (1, H, W) or (3, H, W), got {values.shape}"
        )
    values = values.astype(np.float64)
    low, high = float(values.min()), float(values.max())
    scaled = (values - low) * (255.0 / (high - low)) if high - low > 1e-12 else values * 0
    gray = np.rint(scaled).astype(np.uint8)
    if gray.ndim == 3 and gray.shape[0] == 3:  # as OpenCV's applyColorMap: BGR to gray
        weighted = 0.114 * gray[0] + 0.587 * gray[1] + 0.299 * gray[2]
        gray = np.clip(np.rint(weighted), 0, 255).astype(np.uint8)
    elif gray.ndim == 3:
        gray = gray[0]
    heat = colormaps["jet"](gray)[..., :3]
    heat = np.clip(np.rint(heat * 255), 0, 255).astype(np.uint8)
    return heat if img is None else blend(img, heat, alpha)


def img_from_canvas(canvas: Any) -> Any:
    """The RGB pixels (H, W, 3, uint8) rendered by a matplotlib Agg canvas."""
    import numpy as np

    buffer, (width, height) = canvas.print_to_buffer()
    rgba = np.frombuffer(buffer, dtype=np.uint8).reshape(height, width, 4)
    return rgba[..., :3].copy()
