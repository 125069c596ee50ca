"""Register the runner tests' toy dataset and model for the checkpoint tests."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "runner"))  # fmt: skip
from runner_toys import register_toys  # noqa: E402


@pytest.fixture(autouse=True)
def _toys() -> None:
    register_toys()
