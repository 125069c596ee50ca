"""What each rank keeps for itself in a checkpoint: its RNG streams, in the helper's format."""

from __future__ import annotations

import io
import random
from typing import Any

import numpy as np
import torch

from cadence.runner import rank_state
from cadence.utils.rng import rng_state


def _saved_bytes(state: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def test_checkpoints_store_exactly_this_format() -> None:
    random.seed(3), np.random.seed(3), torch.manual_seed(3)
    ours = _saved_bytes(rng_state())
    random.seed(3), np.random.seed(3), torch.manual_seed(3)
    saved = rank_state.gather_rng_states()  # what a one-process checkpoint holds
    assert saved["world_size"] == 1
    assert ours == _saved_bytes(saved["ranks"][0])
