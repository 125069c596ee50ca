"""Run a block without disturbing this process's global random streams."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch


@contextmanager
def preserved_rng() -> Iterator[None]:
    """Restore Python's, NumPy's and torch's (CPU and initialised CUDA) random states on exit.

    Whatever the block draws (a validation dataloader's base seed, random
    test-time transforms) leaves the streams of the enclosing training as they were.
    """
    py_state = random.getstate()
    np_state = np.random.get_state()
    cpu_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    try:
        yield
    finally:
        random.setstate(py_state)
        np.random.set_state(np_state)
        torch.set_rng_state(cpu_state)
        if cuda_state is not None:
            torch.cuda.set_rng_state_all(cuda_state)
