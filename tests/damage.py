"""Damage the tests do to checkpoint files: the corruption a load or resume must refuse."""

from __future__ import annotations

import os
from typing import Any


def flip_a_byte(path: Any, where: float = 0.5) -> None:
    """Invert the byte at fraction ``where`` of the file (its middle by default)."""
    with open(path, "r+b") as f:
        f.seek(int(os.path.getsize(path) * where))
        byte = f.read(1)
        f.seek(-1, os.SEEK_CUR)
        f.write(bytes([byte[0] ^ 0xFF]))
