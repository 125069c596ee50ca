"""Image helpers for the backends: one canonical layout (HWC, uint8, RGB) and PNG output.

numpy is imported when an image is first handled, so importing the visualization
package stays cheap. PNGs are written with Pillow when it is installed and with a
small built-in encoder otherwise.
"""

from __future__ import annotations

import os
import struct
import sys
import zlib
from typing import Any

_CHANNELS = (1, 3, 4)


def _to_numpy(image: Any) -> tuple[Any, bool]:
    """The image as a numpy array, and whether it came from a torch tensor."""
    import numpy as np

    torch = sys.modules.get("torch")
    if torch is not None and isinstance(image, torch.Tensor):
        return image.detach().cpu().numpy(), True
    if isinstance(image, np.ndarray):
        return image, False
    raise TypeError(f"an image must be a numpy array or a torch tensor, got {type(image).__name__}")


def _to_hwc(array: Any, from_tensor: bool) -> Any:
    """Put the channel axis last; 2-D arrays gain a single channel."""
    if array.ndim == 2:
        return array[:, :, None]
    if array.ndim != 3:
        raise ValueError(
            f"an image must have 2 (HW) or 3 (HWC or CHW) dimensions, got shape {array.shape}"
        )
    channels_first = array.shape[0] in _CHANNELS
    channels_last = array.shape[-1] in _CHANNELS
    # Tensors are CHW by torch's convention; arrays are HWC by numpy's (and PIL's, cv2's).
    if channels_first and (from_tensor or not channels_last):
        return array.transpose(1, 2, 0)
    if channels_last:
        return array
    raise ValueError(
        f"cannot find the channel axis of an image of shape {array.shape}: expected "
        "1, 3 or 4 channels first (CHW) or last (HWC)"
    )


def _to_uint8(array: Any) -> Any:
    """uint8 pixels: floats in [0, 1] are scaled by 255, larger floats and ints are clipped."""
    import numpy as np

    if array.dtype == np.uint8:
        return array
    if array.dtype == np.bool_:
        return array.astype(np.uint8) * 255
    if np.issubdtype(array.dtype, np.floating):
        array = np.nan_to_num(array.astype(np.float64), nan=0.0, posinf=255.0, neginf=0.0)
        if array.size and array.max() <= 1.0:
            array = array * 255.0
        return np.clip(np.rint(array), 0, 255).astype(np.uint8)
    if np.issubdtype(array.dtype, np.integer):
        return np.clip(array, 0, 255).astype(np.uint8)
    raise TypeError(f"image pixels must be numbers or booleans, got dtype {array.dtype}")


def to_rgb_uint8(image: Any) -> Any:
    """``image`` as a contiguous HWC uint8 RGB numpy array.

    Accepts numpy arrays (HW, HWC or CHW) and torch tensors (CHW or HWC, on any
    device). Gray images are repeated to three channels and an alpha channel is
    dropped. Floats are read as [0, 1] when no value exceeds 1, else as [0, 255].
    """
    import numpy as np

    array, from_tensor = _to_numpy(image)
    array = _to_hwc(array, from_tensor)
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise ValueError(f"an image must not be empty, got height x width {array.shape[:2]}")
    array = _to_uint8(array)
    if array.shape[2] == 1:
        array = np.repeat(array, 3, axis=2)
    elif array.shape[2] == 4:
        array = array[:, :, :3]
    return np.ascontiguousarray(array)


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


def encode_png(rgb: Any) -> bytes:
    """The bytes of a PNG file (8-bit RGB, no filtering) holding an HWC uint8 array."""
    height, width = int(rgb.shape[0]), int(rgb.shape[1])
    rows = rgb.reshape(height, width * 3)
    raw = b"".join(b"\x00" + rows[row].tobytes() for row in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(raw, 6))
        + _png_chunk(b"IEND", b"")
    )


def write_png(path: str | os.PathLike[str], image: Any) -> None:
    """Write ``image`` (anything :func:`to_rgb_uint8` accepts) to ``path`` as a PNG."""
    rgb = to_rgb_uint8(image)
    try:
        from PIL import Image
    except ImportError:
        with open(path, "wb") as file:
            file.write(encode_png(rgb))
        return
    Image.fromarray(rgb).save(os.fspath(path), format="PNG")
