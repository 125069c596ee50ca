"""Register the runner tests' toy dataset and model for the checkpoint tests."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "runner"))  # fmt: skip
from runner_toys import Blobs, ToyClassifier  # noqa: E402

from cadence.registry import DATASETS, MODELS  # noqa: E402


@pytest.fixture(autouse=True)
def _toys() -> None:
    DATASETS.register_module(module=Blobs, force=True)
    MODELS.register_module(module=ToyClassifier, force=True)
