"""The random streams of this process (Python, NumPy, torch CPU and CUDA): save, restore.

The one place cadence reads and writes the global RNG states. :func:`rng_state` is the
format checkpoints store under ``rng`` (load-safe types, so ``weights_only`` loading
works); :func:`preserved_rng` runs a block without disturbing the streams.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch


def rng_state(*, init_cuda: bool = True) -> dict[str, Any]:
    """The state of every random stream of this process, in load-safe types.

    ``{'python', 'numpy', 'torch'}`` plus ``'cuda'`` (every device) where CUDA is
    available; with ``init_cuda=False`` CUDA streams are read only if CUDA is already
    initialised, so saving never starts it.
    """
    numpy_state: Any = np.random.get_state()
    kind, keys, pos, has_gauss, cached = numpy_state
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": (kind, keys.tolist(), pos, has_gauss, cached),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_initialized() if not init_cuda else torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`rng_state` returned (also after a ``weights_only`` load)."""
    if "python" in state:
        version, internal, gauss = state["python"]
        random.setstate((version, tuple(internal), gauss))
    if "numpy" in state:
        kind, keys, pos, has_gauss, cached = state["numpy"]
        np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))
    if "torch" in state:
        torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


@contextmanager
def preserved_rng() -> Iterator[None]:
    """Restore Python's, NumPy's and torch's (CPU and initialised CUDA) random states on exit.

    Whatever the block draws (a validation dataloader's base seed, random
    test-time transforms, PreciseBN's extra batches) leaves the streams of the
    enclosing training as they were. CUDA is not initialised by saving.
    """
    state = rng_state(init_cuda=False)
    try:
        yield
    finally:
        set_rng_state(state)
