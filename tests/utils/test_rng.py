"""The one RNG state helper: checkpoint format, exact restore, preserved blocks."""

from __future__ import annotations

import io
import random
from typing import Any

import numpy as np
import pytest
import torch

from cadence.loops.rng import preserved_rng as loops_preserved_rng
from cadence.utils.rng import preserved_rng, rng_state, set_rng_state


def _draws() -> tuple[float, list[float], list[float]]:
    return random.random(), np.random.rand(3).tolist(), torch.rand(3).tolist()


def _saved_bytes(state: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    return buffer.getvalue()


def test_restores_every_stream_after_a_weights_only_round_trip() -> None:
    random.seed(0), np.random.seed(0), torch.manual_seed(0)
    _draws()
    buffer = io.BytesIO(_saved_bytes(rng_state()))
    expected = _draws()
    _draws()
    set_rng_state(torch.load(buffer, weights_only=True))
    assert _draws() == expected


def test_preserved_rng_restores_streams_even_when_the_block_raises() -> None:
    torch.manual_seed(1)
    with preserved_rng():
        inside = _draws()
    assert _draws() == inside  # the block's draws did not move the streams
    before = rng_state()
    with pytest.raises(RuntimeError), preserved_rng():
        _draws()
        raise RuntimeError("boom")
    assert _saved_bytes(rng_state()) == _saved_bytes(before)
    assert loops_preserved_rng is preserved_rng  # the old import path is the same helper


def test_cuda_streams_are_read_only_when_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: ["cuda-state"])
    assert rng_state()["cuda"] == ["cuda-state"]  # checkpoints save every device's stream
    assert "cuda" not in rng_state(init_cuda=False)  # preserved_rng never starts CUDA
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    assert rng_state(init_cuda=False)["cuda"] == ["cuda-state"]
