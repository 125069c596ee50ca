"""Allowed classes nest, and a weights-only block holds even for callers that ask for
``weights_only=False`` (as DeepSpeed's checkpoint conversion does)."""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass

import pytest
import torch

from cadence.checkpoint.unpickling import allowed_globals, weights_only_loads


@dataclass
class Scale:
    value: float


class Payload:
    """Unpickling it runs code: it must never be loaded."""

    def __reduce__(self):
        return (os.system, ("echo payload-ran",))


def test_allowed_classes_nest_and_leave_what_an_outer_block_allowed(tmp_path):
    path = str(tmp_path / "scale.pt")
    torch.save({"s": Scale(2.0)}, path)
    with allowed_globals([Scale]):
        with allowed_globals([Scale, torch.Size]):  # leaving it keeps the outer Scale
            pass
        assert torch.load(path, weights_only=True)["s"] == Scale(2.0)
    assert Scale not in torch.serialization.get_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        torch.load(path, weights_only=True)


def test_a_weights_only_block_refuses_what_a_caller_loads_with_weights_only_false(tmp_path):
    plain, payload = str(tmp_path / "plain.pt"), str(tmp_path / "payload.pt")
    torch.save({"s": Scale(1.5), "t": torch.ones(2)}, plain)
    torch.save({"p": Payload()}, payload)
    before = os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD")
    with weights_only_loads([Scale]):
        assert torch.load(plain, weights_only=False)["s"] == Scale(1.5)
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            torch.load(payload, weights_only=False)
    assert os.environ.get("TORCH_FORCE_WEIGHTS_ONLY_LOAD") == before
    assert Scale not in torch.serialization.get_safe_globals()
