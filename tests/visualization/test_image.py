"""Image helpers: layouts and dtypes normalised to HWC uint8 RGB; PNG files with or without PIL."""

from __future__ import annotations

import struct
import sys
import zlib

import numpy as np
import pytest
import torch
from PIL import Image

from cadence.visualization import encode_png, to_rgb_uint8, write_png


def test_hwc_uint8_array_is_unchanged():
    image = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    out = to_rgb_uint8(image)
    assert out.dtype == np.uint8 and out.shape == (2, 3, 3)
    assert np.array_equal(out, image)


def test_chw_tensor_and_chw_array_are_transposed():
    chw = torch.arange(3 * 2 * 5, dtype=torch.uint8).reshape(3, 2, 5)
    expected = np.zeros((2, 5, 3), dtype=np.uint8)
    for c in range(3):
        for h in range(2):
            for w in range(5):
                expected[h, w, c] = c * 10 + h * 5 + w
    assert np.array_equal(to_rgb_uint8(chw), expected)
    assert np.array_equal(to_rgb_uint8(chw.numpy()), expected)  # 5 is not a channel count


def test_ambiguous_shapes_follow_each_library_convention():
    # (3, 2, 4) could be CHW or HWC-with-alpha: tensors read CHW, arrays read HWC.
    block = np.arange(24, dtype=np.uint8).reshape(3, 2, 4)
    assert to_rgb_uint8(torch.from_numpy(block)).shape == (2, 4, 3)
    as_array = to_rgb_uint8(block)
    assert as_array.shape == (3, 2, 3) and as_array[0, 1].tolist() == [4, 5, 6]


def test_hwc_tensor_is_kept_when_the_first_axis_is_not_channels():
    hwc = torch.zeros(5, 6, 3, dtype=torch.uint8)
    hwc[1, 2] = torch.tensor([10, 20, 30], dtype=torch.uint8)
    out = to_rgb_uint8(hwc)
    assert out.shape == (5, 6, 3) and out[1, 2].tolist() == [10, 20, 30]


def test_floats_in_unit_range_scale_by_255_and_larger_floats_are_clipped():
    unit = np.array([[[0.0, 0.5, 1.0]]], dtype=np.float32)  # 1x1x3
    assert to_rgb_uint8(unit).tolist() == [[[0, 128, 255]]]  # 127.5 rounds to even: 128
    wide = np.array([[[-3.0, 100.4, 300.0]]])
    assert to_rgb_uint8(wide).tolist() == [[[0, 100, 255]]]
    with_nan = np.array([[[np.nan, 0.25, 1.0]]])
    assert to_rgb_uint8(with_nan).tolist() == [[[0, 64, 255]]]  # 63.75 -> 64


def test_gray_bool_int_and_alpha_images():
    gray = np.array([[0, 7], [200, 255]], dtype=np.uint8)
    out = to_rgb_uint8(gray)
    assert out.shape == (2, 2, 3) and out[1, 0].tolist() == [200, 200, 200]
    assert to_rgb_uint8(np.array([[True, False]])).tolist() == [[[255] * 3, [0] * 3]]
    ints = np.array([[[-5, 128, 999]]], dtype=np.int64)
    assert to_rgb_uint8(ints).tolist() == [[[0, 128, 255]]]
    rgba = np.array([[[1, 2, 3, 4]]], dtype=np.uint8)
    assert to_rgb_uint8(rgba).tolist() == [[[1, 2, 3]]]
    one_channel_tensor = torch.full((1, 2, 2), 0.5)
    assert to_rgb_uint8(one_channel_tensor).tolist() == [[[128] * 3] * 2] * 2


def test_bad_images_say_what_was_expected():
    with pytest.raises(TypeError, match="numpy array or a torch tensor"):
        to_rgb_uint8([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="2 \\(HW\\) or 3"):
        to_rgb_uint8(np.zeros((1, 2, 3, 3)))
    with pytest.raises(ValueError, match="channel axis"):
        to_rgb_uint8(np.zeros((5, 6, 7)))
    with pytest.raises(ValueError, match="empty"):
        to_rgb_uint8(np.zeros((0, 4, 3)))
    with pytest.raises(TypeError, match="dtype"):
        to_rgb_uint8(np.array([[["a", "b", "c"]]]))


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    """Parse PNG chunks by hand, checking each CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, pos = [], 8
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        payload = data[pos + 8 : pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])
        assert crc == zlib.crc32(kind + payload) & 0xFFFFFFFF
        chunks.append((kind, payload))
        pos += 12 + length
    return chunks


def test_encode_png_layout_and_pixels():
    rgb = np.array([[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [9, 8, 7]]], dtype=np.uint8)
    data = encode_png(rgb)
    chunks = _chunks(data)
    assert [kind for kind, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    assert struct.unpack(">IIBBBBB", chunks[0][1]) == (2, 2, 8, 2, 0, 0, 0)
    raw = zlib.decompress(chunks[1][1])  # each row: filter byte 0, then RGB bytes
    assert raw == b"\x00\xff\x00\x00\x00\xff\x00" + b"\x00\x00\x00\xff\x09\x08\x07"


def test_write_png_with_and_without_pil(tmp_path, monkeypatch):
    image = np.random.default_rng(0).integers(0, 256, size=(7, 5, 3), dtype=np.uint8)
    write_png(tmp_path / "pil.png", image)
    monkeypatch.setitem(sys.modules, "PIL", None)  # `from PIL import Image` now fails
    write_png(tmp_path / "plain.png", image)
    monkeypatch.undo()
    for name in ("pil.png", "plain.png"):
        with Image.open(tmp_path / name) as png:
            assert png.format == "PNG" and png.mode == "RGB"
            assert np.array_equal(np.asarray(png), image)
