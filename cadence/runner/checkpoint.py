"""What a checkpoint holds besides weights: position, RNG streams, pointers."""

from __future__ import annotations

import os
import random
import tempfile
from typing import Any

import numpy as np
import torch

LAST_CHECKPOINT = "last_checkpoint"


def rng_state() -> dict[str, Any]:
    """The state of every random stream of this process, in load-safe types."""
    numpy_state: Any = np.random.get_state()
    kind, keys, pos, has_gauss, cached = numpy_state
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": (kind, keys.tolist(), pos, has_gauss, cached),
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what :func:`rng_state` returned."""
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


def write_last_checkpoint(work_dir: str, path: str) -> None:
    """Point ``work_dir/last_checkpoint`` at ``path`` (atomically)."""
    os.makedirs(work_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=work_dir, prefix=".last-", suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(path)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, os.path.join(work_dir, LAST_CHECKPOINT))


def find_latest_checkpoint(work_dir: str) -> str | None:
    """The checkpoint ``work_dir/last_checkpoint`` points at, if it still exists."""
    pointer = os.path.join(work_dir, LAST_CHECKPOINT)
    if not os.path.isfile(pointer):
        return None
    with open(pointer) as f:
        path = f.read().strip()
    if path and not os.path.isabs(path):
        path = os.path.join(work_dir, path)
    return path if path and os.path.isfile(path) else None
