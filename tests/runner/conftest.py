"""Register the toy dataset and model for every runner test (registries are isolated)."""

from __future__ import annotations

import pytest
from runner_toys import Blobs, ToyClassifier

from cadence.registry import DATASETS, MODELS


@pytest.fixture(autouse=True)
def _toys() -> None:
    DATASETS.register_module(module=Blobs, force=True)
    MODELS.register_module(module=ToyClassifier, force=True)
