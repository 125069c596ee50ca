"""The resilience tests train through the runner and hook tests' toys: put their folders
on ``sys.path`` and register the runner tests' dataset and model for every test."""

from __future__ import annotations

import os
import sys

import pytest

_TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _folder in ("runner", "hooks"):
    sys.path.insert(0, os.path.join(_TESTS, _folder))
from runner_toys import register_toys  # noqa: E402


@pytest.fixture(autouse=True)
def _toys() -> None:
    register_toys()
