"""Which classes a weights-only ``torch.load`` may rebuild, and forcing weights-only loads.

torch's ``safe_globals`` context does not nest: leaving an inner block removes the
classes an enclosing block allowed. :func:`allowed_globals` removes only what it
added. :func:`weights_only_loads` makes every ``torch.load`` in the block weights-only,
also those of third-party code that asks for ``weights_only=False`` (DeepSpeed's
checkpoint conversion), through torch's ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` switch.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from typing import Any

import torch

_FORCE = "TORCH_FORCE_WEIGHTS_ONLY_LOAD"
_FORCE_NOT = "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"


@contextlib.contextmanager
def allowed_globals(extra: Sequence[Any]) -> Iterator[None]:
    """Allow the classes ``extra`` in weights-only loads inside the block (nests)."""
    present = set(torch.serialization.get_safe_globals())
    added = [item for item in extra if item not in present]
    torch.serialization.add_safe_globals(added)
    try:
        yield
    finally:
        if added:
            kept = [item for item in torch.serialization.get_safe_globals() if item not in added]
            torch.serialization.clear_safe_globals()
            torch.serialization.add_safe_globals(kept)


@contextlib.contextmanager
def weights_only_loads(extra: Sequence[Any] = ()) -> Iterator[None]:
    """Every ``torch.load`` in the block is weights-only (allowing also ``extra``),
    whatever its caller asks for. The switch is process-wide while the block runs."""
    saved = {name: os.environ.get(name) for name in (_FORCE, _FORCE_NOT)}
    os.environ[_FORCE] = "1"
    os.environ.pop(_FORCE_NOT, None)
    try:
        with allowed_globals(extra):
            yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
